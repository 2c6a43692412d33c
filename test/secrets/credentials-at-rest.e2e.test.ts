/**
 * Issue 28, item 4: credentials stay secret. A proxy's credentials and a webhook URL's (`user:password@`,
 * `?token=`) are planted through the API; with ENCRYPTION_KEY set, no file under DATA_DIR holds them in
 * clear (the SQLite files and their -wal included), and no answer or history shows them; yet the gateway
 * uses them: the receiver gets the URL's Basic credentials and token, and the proxy credentials the read
 * model opens pass a real proxy's authentication. Without the key, answers and history still mask them; a
 * gateway that gets the key later seals those its read models held in clear.
 */
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createProxy } from 'proxy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyDispatcherOf } from '../../src/engines/baileys/proxy-agent.js';
import { SealedText } from '../../src/secrets/sealed-text.js';
import { SettingsReadModel } from '../../src/settings/settings-read-model.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { eventually } from '../support/eventually.js';
import { appendReceived } from '../webhooks/support/events.js';
import { TestReceiver } from '../webhooks/support/receiver.js';

/** Every file under `dir`, recursively (one that SQLite removes meanwhile, a -shm, is left out). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats) return [];
    return stats.isDirectory() ? filesUnder(path) : [path];
  });
}

/** The planted secrets found in clear in the files under `dir`, as `file: secret`. */
function secretsOnDisk(dir: string, secrets: readonly string[]): string[] {
  return filesUnder(dir).flatMap((file) => {
    const bytes = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
    return secrets.filter((secret) => bytes.includes(secret)).map((secret) => `${file}: ${secret}`);
  });
}

/** A stopped gateway's read models are settled once their WAL is copied back (the checkpoint thread's connection closes last). */
const readModelsSettled = (dataDir: string) =>
  eventually(() => !existsSync(join(dataDir, 'read-models.sqlite-wal')), 'the read models checkpointed');

/** Fresh secrets, so that nothing else in a file can match them by chance. */
function plantedSecrets() {
  const tag = randomBytes(6).toString('hex');
  return {
    proxyUser: `proxyuser${tag}`,
    proxyPassword: `ProxyPass${tag}`,
    hookUser: `hookuser${tag}`,
    hookPassword: `HookPass${tag}`,
    hookToken: `HookToken${tag}`,
  };
}

describe('credentials at rest and in answers (issue 28)', () => {
  let receiver: TestReceiver;
  let proxy: ReturnType<typeof createProxy>;
  let proxyPort: number;
  let origin: Server;
  let originHost: string;
  const tunnels: string[] = [];

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    proxy = createProxy(createServer());
    proxy.on('connect', (req: IncomingMessage) => tunnels.push(String(req.url)));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as { port: number }).port;
    origin = createServer((_req, res) => res.end('through the proxy'));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originHost = `127.0.0.1:${(origin.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await receiver.close();
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
    origin.closeAllConnections();
    await new Promise((resolve) => origin.close(resolve));
  });

  /** Plants the proxy and the hook URL through the API; answers what the answers and the history showed. */
  async function plant(api: Api, deviceId: string, planted: ReturnType<typeof plantedSecrets>) {
    const created = await api('POST', '/devices', { admin: true, json: { id: deviceId, name: deviceId } });
    expect(created.status).toBe(201);
    const deviceKey: string = created.body.deviceKey;
    const proxyUrl = `http://${planted.proxyUser}:${planted.proxyPassword}@127.0.0.1:${proxyPort}`;
    const patched = await api('PATCH', `/devices/${deviceId}/settings`, { deviceKey, json: { proxy: proxyUrl } });
    expect(patched.status).toBe(200);
    expect(patched.body.proxy).toBe(`http://***:***@127.0.0.1:${proxyPort}`);
    const hookUrl =
      receiver.url.replace('http://', `http://${planted.hookUser}:${planted.hookPassword}@`) +
      `?token=${planted.hookToken}&plain=1`;
    const put = await api('PUT', `/devices/${deviceId}/hooks`, {
      deviceKey,
      json: { url: hookUrl, events: ['message.received'] },
    });
    expect(put.status).toBe(200);
    const shownHookUrl = `http://***:***@127.0.0.1:${receiver.port}/hooks?token=***&plain=1`;
    expect(put.body.url).toBe(shownHookUrl);
    return { deviceKey, shownHookUrl };
  }

  /** Every answer that could show them: settings, hooks, device, deliveries, history (both directions). */
  async function answers(api: Api, deviceId: string, deviceKey: string): Promise<string> {
    const shown = await Promise.all([
      api('GET', `/devices/${deviceId}/settings`, { deviceKey }),
      api('GET', `/devices/${deviceId}/hooks`, { deviceKey }),
      api('GET', `/devices/${deviceId}`, { admin: true }),
      api('GET', `/devices/${deviceId}/hooks/deliveries`, { admin: true }),
      api('GET', `/devices/${deviceId}/events?limit=1000`, { admin: true }),
      api('GET', `/devices/${deviceId}/events?limit=1000&direction=backwards`, { admin: true }),
    ]);
    for (const answer of shown) expect(answer.status).toBe(200);
    return JSON.stringify(shown.map((answer) => answer.body));
  }

  /** The receiver got the delivery with the URL's credentials: Basic authorization and the token. */
  async function expectDeliveredWithCredentials(
    deviceId: string,
    planted: ReturnType<typeof plantedSecrets>,
    count: number,
  ) {
    await receiver.waitUntil(() => receiver.of(deviceId).length >= count);
    for (const request of receiver.of(deviceId)) {
      expect(request.headers.authorization).toBe(
        `Basic ${Buffer.from(`${planted.hookUser}:${planted.hookPassword}`).toString('base64')}`,
      );
      expect(request.url).toBe(`/hooks?token=${planted.hookToken}&plain=1`);
    }
  }

  /** The settings read model of `dataDir` opens the proxy credentials, and a proxy that demands them lets them through. */
  async function expectProxyCredentialsWork(
    dataDir: string,
    deviceId: string,
    key: Buffer | undefined,
    planted: ReturnType<typeof plantedSecrets>,
  ) {
    proxy.authenticate = (req: IncomingMessage) =>
      req.headers['proxy-authorization'] ===
      `Basic ${Buffer.from(`${planted.proxyUser}:${planted.proxyPassword}`).toString('base64')}`;
    const db = new Database(join(dataDir, 'read-models.sqlite'), { readonly: true });
    try {
      const settings = new SettingsReadModel(db, new SealedText(key)).get(deviceId);
      expect(settings.proxy?.credentials).toEqual({ username: planted.proxyUser, password: planted.proxyPassword });
      const dispatcher = proxyDispatcherOf(settings.proxy!, { allowPrivateNetworks: true });
      try {
        const response = await fetch(`http://${originHost}/`, { dispatcher } as unknown as RequestInit);
        expect(await response.text()).toBe('through the proxy');
        expect(tunnels).toContain(originHost);
      } finally {
        await dispatcher.close();
      }
    } finally {
      db.close();
    }
  }

  it('with ENCRYPTION_KEY: nothing under DATA_DIR holds them in clear, no answer shows them, and they still work', async () => {
    const key = randomBytes(32);
    const planted = plantedSecrets();
    const secrets = Object.values(planted);
    const gateway = await startTestGateway({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ENCRYPTION_KEY: key.toString('base64'),
    });
    try {
      const { deviceKey, shownHookUrl } = await plant(gateway.api, 'sealed-creds', planted);
      await appendReceived(gateway.store, 'sealed-creds', 1);
      await expectDeliveredWithCredentials('sealed-creds', planted, 1);
      // The test event goes out with them too.
      const test = await gateway.api('POST', '/devices/sealed-creds/hooks/test', { deviceKey });
      expect(test.body).toMatchObject({ delivered: true, status: 200 });
      await expectDeliveredWithCredentials('sealed-creds', planted, 2);

      // The hook as GET shows it, PUT back with another kind: the stored URL stays (the receiver still gets them).
      const shown = await gateway.api('GET', '/devices/sealed-creds/hooks', { deviceKey });
      expect(shown.body.url).toBe(shownHookUrl);
      const back = await gateway.api('PUT', '/devices/sealed-creds/hooks', {
        deviceKey,
        json: { url: shown.body.url, events: ['message.received', 'message.status'] },
      });
      expect(back.status).toBe(200);
      expect(back.body.url).toBe(shownHookUrl);
      await appendReceived(gateway.store, 'sealed-creds', 1, 2);
      await expectDeliveredWithCredentials('sealed-creds', planted, 3);
      // `***` anywhere else is no credential: refused, nothing changes.
      for (const url of [
        shownHookUrl.replace('/hooks', '/other'),
        `http://${planted.hookUser}:***@127.0.0.1:${receiver.port}/hooks`,
        `http://127.0.0.1:${receiver.port}/hooks?access_token=***`,
      ]) {
        const refused = await gateway.api('PUT', '/devices/sealed-creds/hooks', {
          deviceKey,
          json: { url, events: ['message.received'] },
        });
        expect(refused.status, url).toBe(400);
        expect(refused.headers.get('content-type')).toContain('application/problem+json');
        expect(refused.body).toMatchObject({ code: 'invalid_request', errors: [{ path: '/url' }] });
      }

      const shownEverywhere = await answers(gateway.api, 'sealed-creds', deviceKey);
      for (const secret of secrets) expect(shownEverywhere).not.toContain(secret);
      expect(shownEverywhere).toContain(shownHookUrl);

      expect(secretsOnDisk(gateway.dataDir, secrets)).toEqual([]);
    } finally {
      await gateway.close();
    }
    await readModelsSettled(gateway.dataDir);
    expect(secretsOnDisk(gateway.dataDir, secrets)).toEqual([]);
    await expectProxyCredentialsWork(gateway.dataDir, 'sealed-creds', key, planted);
  });

  it('without ENCRYPTION_KEY: answers and history mask them; a gateway given the key later seals its read models', async () => {
    const planted = plantedSecrets();
    const secrets = Object.values(planted);
    const unkeyed = await startTestGateway({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    const { dataDir } = unkeyed;
    let deviceKey: string;
    try {
      ({ deviceKey } = await plant(unkeyed.api, 'clear-creds', planted));
      await appendReceived(unkeyed.store, 'clear-creds', 1);
      await expectDeliveredWithCredentials('clear-creds', planted, 1);
      const shownEverywhere = await answers(unkeyed.api, 'clear-creds', deviceKey);
      for (const secret of secrets) expect(shownEverywhere).not.toContain(secret);
    } finally {
      await unkeyed.close();
    }
    await readModelsSettled(dataDir);
    // Kept in clear, as README says: there is no key to seal them with.
    expect(secretsOnDisk(dataDir, secrets)).not.toEqual([]);
    await expectProxyCredentialsWork(dataDir, 'clear-creds', undefined, planted);

    // The upgrade: the read models of the version before (their versions set back) are rebuilt, now with the key.
    const db = new Database(join(dataDir, 'read-models.sqlite'));
    db.exec("UPDATE projection_checkpoints SET version = version - 1 WHERE name IN ('webhooks', 'device-settings')");
    db.close();
    const key = randomBytes(32);
    const keyed = await startTestGateway({
      DATA_DIR: dataDir,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ENCRYPTION_KEY: key.toString('base64'),
    });
    try {
      await appendReceived(keyed.store, 'clear-creds', 1, 2);
      await expectDeliveredWithCredentials('clear-creds', planted, 2);
      const shownEverywhere = await answers(keyed.api, 'clear-creds', deviceKey!);
      for (const secret of secrets) expect(shownEverywhere).not.toContain(secret);
    } finally {
      await keyed.close();
    }
    // The read models hold them sealed only; the log keeps the events written before, as they were (README).
    await readModelsSettled(dataDir);
    const found = secretsOnDisk(dataDir, secrets);
    expect(found.filter((where) => !where.startsWith(join(dataDir, 'events.sqlite')))).toEqual([]);
    await expectProxyCredentialsWork(dataDir, 'clear-creds', key, planted);
  });
});
