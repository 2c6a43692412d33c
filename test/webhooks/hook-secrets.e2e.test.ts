/**
 * With ENCRYPTION_KEY, webhook signing secrets are sealed in the log and the read model: the event store
 * and read-models.sqlite never hold them in clear, yet the hooks answer and the signatures use the secret.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookSecretUnreadableError, HookSecrets } from '../../src/webhooks/hook-secrets.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { appendReceived } from './support/events.js';
import { TestReceiver } from './support/receiver.js';

describe('webhook secrets at rest', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let receiver: TestReceiver;

  beforeAll(async () => {
    gateway = await startTestGateway({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    api = gateway.api;
    receiver = await TestReceiver.start();
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  it('seals the secret in the event and the read model, and signs with it', async () => {
    const created = await api('POST', '/devices', { admin: true, json: { id: 'sealed', name: 'sealed' } });
    const put = await api('PUT', '/devices/sealed/hooks', {
      deviceKey: created.body.deviceKey,
      json: { url: receiver.url, events: ['message.received'] },
    });
    expect(put.status).toBe(200);
    const secret: string = put.body.secret;
    expect(secret).toMatch(/^whsec_/);

    const [configured] = (await gateway.store.readStream('device-sealed')).filter((e) => e.type === 'HooksConfigured');
    const stored = (configured.data as { secret: string }).secret;
    expect(stored).toMatch(/^sealed:v1:/);
    expect(JSON.stringify(configured.data)).not.toContain(secret.slice('whsec_'.length));
    const db = new Database(join(gateway.dataDir, 'read-models.sqlite'), { readonly: true });
    const row = db.prepare('SELECT secret FROM webhook_targets WHERE scope = ?').get('sealed') as { secret: string };
    db.close();
    expect(row.secret).toBe(stored);

    expect((await api('GET', '/devices/sealed/hooks', { deviceKey: created.body.deviceKey })).body.secret).toBe(secret);
    // Configured again without rotation: the same secret, still sealed.
    const again = await api('PUT', '/devices/sealed/hooks', {
      deviceKey: created.body.deviceKey,
      json: { url: receiver.url, events: ['message.received'] },
    });
    expect(again.body.secret).toBe(secret);

    await appendReceived(gateway.store, 'sealed', 1);
    await receiver.waitUntil(() => receiver.of('sealed').length === 1);
    const [request] = receiver.of('sealed');
    expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toEqual(
      request.envelope,
    );
  });

  it('reads a secret written before the key was set, and refuses to open a sealed one without the key or with another', () => {
    const key = randomBytes(32);
    const sealed = new HookSecrets(key).seal('d1', 'whsec_abc');
    expect(new HookSecrets(key).open('d1', sealed)).toBe('whsec_abc');
    expect(new HookSecrets(key).open('d1', 'whsec_plain')).toBe('whsec_plain');
    expect(new HookSecrets(undefined).seal('d1', 'whsec_plain')).toBe('whsec_plain');
    expect(() => new HookSecrets(undefined).open('d1', sealed)).toThrow('ENCRYPTION_KEY is not set');
    expect(() => new HookSecrets(randomBytes(32)).open('d1', sealed)).toThrow(HookSecretUnreadableError);
    expect(() => new HookSecrets(key).open('d2', sealed)).toThrow('sealed with another one');
  });

  it('answers 503 hook_secret_unreadable, not 500, when the gateway runs with another key than the secret was sealed with', async () => {
    const other = await startTestGateway({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    const created = await other.api('POST', '/devices', { admin: true, json: { id: 'rekeyed', name: 'rekeyed' } });
    expect(
      (
        await other.api('PUT', '/devices/rekeyed/hooks', {
          deviceKey: created.body.deviceKey,
          json: { url: receiver.url, events: ['message.received'] },
        })
      ).status,
    ).toBe(200);
    await other.close();
    const restarted = await startTestGateway({
      DATA_DIR: other.dataDir,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    try {
      const read = await restarted.api('GET', '/devices/rekeyed/hooks', { deviceKey: created.body.deviceKey });
      expect(read.status).toBe(503);
      expect(read.body).toMatchObject({
        code: 'hook_secret_unreadable',
        detail: expect.stringContaining('ENCRYPTION_KEY'),
      });
      // A new secret, sealed with this key, ends it.
      const rotated = await restarted.api('PUT', '/devices/rekeyed/hooks', {
        deviceKey: created.body.deviceKey,
        json: { url: receiver.url, events: ['message.received'], rotateSecret: true },
      });
      expect(rotated.status).toBe(200);
      expect(
        (await restarted.api('GET', '/devices/rekeyed/hooks', { deviceKey: created.body.deviceKey })).body.secret,
      ).toBe(rotated.body.secret);
    } finally {
      await restarted.close();
    }
  });
});
