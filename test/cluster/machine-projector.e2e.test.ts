/**
 * GATEWAY_PROCESSES=2 (issue 30): one projector per machine, in the primary, writes the one read-model file every
 * worker serves from (no read-models.w<N>.sqlite of their own, so each event is applied once, not once per
 * process); a write answered by one worker is read back through the other at once (read-your-writes, cached
 * views dropped when the projector says a read model changed them: a device's rows, a deleted scoped key, the
 * global webhooks); webhooks go out from the device's owner, told of its work by the projector.
 */
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_KEY, tempDir } from '../support/gateway.js';
import { CHILD_GATEWAY_TESTS, type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { eventually } from '../support/eventually.js';
import { TestReceiver } from '../webhooks/support/receiver.js';

/** One request on a connection of its own: node:cluster hands each new connection to either worker. */
function call(
  url: string,
  method: string,
  path: string,
  json?: unknown,
  key: Record<string, string> = { 'x-admin-key': ADMIN_KEY },
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const body = json === undefined ? undefined : JSON.stringify(json);
    const sent = request(
      `${url}${path}`,
      {
        method,
        agent: false,
        headers: { ...key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : text }));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

describe('GATEWAY_PROCESSES=2: one projector for the machine', CHILD_GATEWAY_TESTS, () => {
  let gateway: ChildGateway | undefined;
  let receiver: TestReceiver | undefined;
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
    await receiver?.close();
    receiver = undefined;
  });

  it('serves every worker from one read-model file, with read-your-writes and webhooks through any worker', async () => {
    const dataDir = tempDir('dmg-machine-projector-');
    gateway = await spawnGateway(dataDir, {
      DEFAULT_ENGINE: 'sandbox',
      GATEWAY_PROCESSES: '2',
      LEASE_TIMEOUT: '2s',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const url = gateway.url;
    // Both workers listening (the second may start later than the first).
    await eventually(
      async () => (await call(url, 'GET', '/health')).body.cluster?.members?.length === 2,
      'both workers joined',
      60_000,
    );
    const files = readdirSync(dataDir).filter((file) => file.startsWith('read-models'));
    expect(files.filter((file) => file.endsWith('.sqlite'))).toEqual(['read-models.sqlite']);

    receiver = await TestReceiver.start();
    for (let i = 0; i < 4; i++) {
      const id = `m${i}`;
      const created = await call(url, 'POST', '/devices', { id, name: id, engine: 'sandbox' });
      expect(created.status).toBe(201);
      // Answered by whichever worker took the connection, read back by whichever takes the next one.
      for (let round = 0; round < 5; round++) {
        const name = `${id}-${round}`;
        const renamed = await call(url, 'PATCH', `/devices/${id}`, { name });
        expect(renamed.status).toBe(200);
        expect((await call(url, 'GET', `/devices/${id}`)).body.name).toBe(name);
      }
      const hooked = await call(url, 'PUT', `/devices/${id}/hooks`, { url: receiver.url, events: ['session.state'] });
      expect(hooked.status).toBe(200);
      expect((await call(url, 'GET', `/devices/${id}/hooks`)).body.url).toBe(receiver.url);
      const opened = await call(url, 'POST', `/devices/${id}/session/open`);
      expect([200, 202]).toContain(opened.status);
    }
    // The owner delivers what the projector recorded for its devices.
    await receiver.waitUntil(
      () => [0, 1, 2, 3].every((i) => receiver!.of(`m${i}`).length > 0),
      60_000,
      'a session.state webhook of every device',
    );
  });

  it('drops a deleted scoped key, the global webhooks and a changed setting in every worker once they change', async () => {
    const dataDir = tempDir('dmg-machine-projector-');
    gateway = await spawnGateway(dataDir, {
      DEFAULT_ENGINE: 'sandbox',
      GATEWAY_PROCESSES: '2',
      LEASE_TIMEOUT: '2s',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const url = gateway.url;
    await eventually(
      async () => (await call(url, 'GET', '/health')).body.cluster?.members?.length === 2,
      'both workers joined',
      60_000,
    );
    // node:cluster hands new connections to the workers in turn: four calls reach each of them at least once.
    const everyWorker = async (method: string, path: string, key?: Record<string, string>) => {
      const answers: number[] = [];
      for (let i = 0; i < 4; i++) answers.push((await call(url, method, path, undefined, key)).status);
      return answers;
    };

    expect((await call(url, 'POST', '/devices', { id: 'k1', name: 'k1', engine: 'sandbox' })).status).toBe(201);
    const made = await call(url, 'POST', '/devices/k1/keys', { name: 'ci', scopes: ['read'] });
    expect(made.status).toBe(201);
    const scoped = { 'x-device-key': made.body.key as string };
    // Each worker caches the key it authenticated.
    expect(await everyWorker('GET', '/devices/k1/session/state', scoped)).toEqual([200, 200, 200, 200]);
    expect((await call(url, 'DELETE', `/devices/k1/keys/${made.body.keyId}`)).status).toBe(204);
    expect(await everyWorker('GET', '/devices/k1/session/state', scoped)).toEqual([401, 401, 401, 401]);

    // Each worker caches the device's settings (read on every send for pacing).
    const rejecting = async () => {
      const answers: boolean[] = [];
      for (let i = 0; i < 4; i++) answers.push((await call(url, 'GET', '/devices/k1/settings')).body.rejectCalls);
      return answers;
    };
    expect(await rejecting()).toEqual([false, false, false, false]);
    expect((await call(url, 'PATCH', '/devices/k1/settings', { rejectCalls: true })).status).toBe(200);
    expect(await rejecting()).toEqual([true, true, true, true]);

    // Each worker caches that there is no global webhook.
    expect(await everyWorker('GET', '/webhooks')).toEqual([200, 200, 200, 200]);
    receiver = await TestReceiver.start();
    const created = await call(url, 'POST', '/webhooks', { url: receiver.url, events: ['session.state'] });
    expect(created.status).toBe(201);
    expect(await everyWorker('GET', `/webhooks/${created.body.webhookId}`)).toEqual([200, 200, 200, 200]);
    // Its deliveries go out from the device's owner, whichever worker that is.
    expect([200, 202]).toContain((await call(url, 'POST', '/devices/k1/session/open')).status);
    await receiver.waitUntil(() => receiver!.of('k1').length > 0, 60_000, "the global webhook's session.state");
  });
});
