/**
 * Device settings over HTTP: call rejection (sandbox calls, the caller told), and the proxy: its URL
 * checked, its credentials redacted in answers and history, and a proxy that is down leaving a Baileys
 * session `reconnecting` with a lastError that names it (without its credentials).
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../../support/gateway.js';
import { type TestDevice, bringOnline, createSandboxDevice, waitForState } from '../../support/sessions.js';
import { TestReceiver } from '../../webhooks/support/receiver.js';
import { settingsStream } from '../../../src/settings/settings-events.js';

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('device settings', () => {
  describe('with private networks refused (the default)', () => {
    let gateway: Awaited<ReturnType<typeof startTestGateway>>;
    let device: TestDevice;
    beforeAll(async () => {
      gateway = await startTestGateway();
      device = await createSandboxDevice(gateway.api, 'settings-1');
    });
    afterAll(() => gateway?.close());
    const patch = (json: unknown) =>
      gateway.api('PATCH', `/devices/${device.id}/settings`, { deviceKey: device.key, json });

    it('starts with nothing set', async () => {
      const answer = await gateway.api('GET', `/devices/${device.id}/settings`, { deviceKey: device.key });
      expect(answer.body).toEqual({
        rejectCalls: false,
        rejectCallsMessage: null,
        proxy: null,
        historySync: 'recent',
        pacing: {
          timezone: 'UTC',
          warmup: null,
          dailyCap: null,
          quietHours: null,
          unansweredLimit: null,
          typing: false,
        },
      });
    });

    it('takes a proxy with credentials, answers and records it with the credentials redacted', async () => {
      const answer = await patch({ proxy: 'socks5://alice:s3cret@proxy.example.com:1080' });
      expect(answer.status).toBe(200);
      expect(answer.body.proxy).toBe('socks5://***:***@proxy.example.com:1080');
      expect(JSON.stringify(answer.body)).not.toContain('s3cret');
      const history = await gateway.api('GET', `/devices/${device.id}/events?limit=1000`, { admin: true });
      const changed = history.body.items.find((item: { type: string }) => item.type === 'DeviceSettingsChanged');
      expect(changed.data.proxy).toEqual({ url: 'socks5://***:***@proxy.example.com:1080', credentials: '[redacted]' });
      expect(JSON.stringify(history.body)).not.toContain('s3cret');
      expect((await patch({ proxy: 'http://proxy.example.com:3128' })).body.proxy).toBe(
        'http://proxy.example.com:3128',
      );
      expect((await patch({ proxy: null })).body.proxy).toBeNull();
    });

    it('keeps both of two pacing changes made at the same time (each merged with the stream, not the read model)', async () => {
      const answers = await Promise.all([patch({ pacing: { dailyCap: 40 } }), patch({ pacing: { typing: true } })]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const settings = await gateway.api('GET', `/devices/${device.id}/settings`, { deviceKey: device.key });
      expect(settings.body.pacing).toMatchObject({ dailyCap: 40, typing: true });
      expect((await patch({ pacing: { dailyCap: null, typing: false } })).body.pacing).toMatchObject({
        dailyCap: null,
        typing: false,
      });
    });

    it('keeps the stored credentials when the proxy comes back as GET shows it, and refuses *** credentials for any other', async () => {
      expect((await patch({ proxy: 'http://alice:s3cret@proxy.example.com:3128' })).status).toBe(200);
      const shown = (await gateway.api('GET', `/devices/${device.id}/settings`, { deviceKey: device.key })).body;
      expect(shown.proxy).toBe('http://***:***@proxy.example.com:3128');
      // A client that changes one field and sends the whole object back.
      const back = await patch({ ...shown, rejectCalls: true });
      expect(back.status).toBe(200);
      expect(back.body).toEqual({ ...shown, rejectCalls: true });
      const recorded = (await gateway.store.readStream(settingsStream(device.id))).map(
        (event) => event.data as { proxy?: { credentials?: unknown } },
      );
      expect(recorded.at(-1)).not.toHaveProperty('proxy');
      expect(recorded.filter((data) => data.proxy !== undefined).at(-1)!.proxy!.credentials).toEqual({
        username: 'alice',
        password: 's3cret',
      });

      const before = recorded.length;
      for (const proxy of [
        'http://***:***@other.example.com:3128',
        'http://***:s3cret@proxy.example.com:3128',
        'http://alice:%2A%2A%2A@proxy.example.com:3128',
        'socks5://***:***@proxy.example.com:3128',
      ]) {
        const refused = await patch({ proxy });
        expect(refused.status, proxy).toBe(400);
        expect(refused.headers.get('content-type')).toContain('application/problem+json');
        expect(refused.body).toMatchObject({ code: 'invalid_request', errors: [{ path: '/proxy' }] });
        expect(refused.body.detail).toContain('***');
      }
      expect((await gateway.store.readStream(settingsStream(device.id))).length).toBe(before);
      expect((await patch({ proxy: null, rejectCalls: false })).status).toBe(200);
    });

    it('refuses other schemes, private addresses and malformed URLs with 400, changing nothing', async () => {
      const before = (await gateway.store.readStream(settingsStream(device.id))).length;
      for (const proxy of [
        'ftp://proxy.example.com:21',
        'socks4://proxy.example.com:1080',
        'http://127.0.0.1:3128',
        'http://10.0.0.5:3128',
        'http://localhost:8080',
        'http://[::1]:3128',
        'http://proxy.example.com:3128/path',
        'http://',
        'nonsense',
        'http://%zz:x@proxy.example.com:3128',
      ]) {
        const answer = await patch({ proxy });
        expect(answer.status, proxy).toBe(400);
        expect(answer.body.code, proxy).toBe('invalid_request');
      }
      expect((await patch({})).status).toBe(400);
      expect((await patch({ rejectCalls: 'yes' })).status).toBe(400);
      expect((await gateway.store.readStream(settingsStream(device.id))).length).toBe(before);
    });
  });

  describe('call rejection (sandbox)', () => {
    let gateway: Awaited<ReturnType<typeof startTestGateway>>;
    let receiver: TestReceiver;
    beforeAll(async () => {
      gateway = await startTestGateway({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
      receiver = await TestReceiver.start();
    });
    afterAll(async () => {
      await gateway?.close();
      await receiver?.close();
    });

    it('rejects calls when set, tells the caller, and records every call', async () => {
      const { api } = gateway;
      const shop = await createSandboxDevice(api, 'callee');
      const caller = await createSandboxDevice(api, 'caller');
      await bringOnline(api, shop, '4915100000002');
      await bringOnline(api, caller, '4915100000004');
      for (const device of [shop, caller]) {
        await api('PUT', `/devices/${device.id}/hooks`, {
          deviceKey: device.key,
          json: { url: receiver.url, events: ['call.received', 'message.received'] },
        });
      }
      const ring = () =>
        api('POST', `/sandbox/devices/${shop.id}/call`, { admin: true, json: { from: '4915100000004' } });
      expect((await ring()).status).toBe(202);
      await receiver.waitUntil(() => receiver.of(shop.id).some((r) => r.envelope.event === 'call.received'));
      expect(receiver.of(shop.id)[0].envelope.data).toMatchObject({ from: '4915100000004', rejected: false });

      const set = await api('PATCH', `/devices/${shop.id}/settings`, {
        deviceKey: shop.key,
        json: { rejectCalls: true, rejectCallsMessage: 'We do not take calls, please write.' },
      });
      expect(set.body).toMatchObject({
        rejectCalls: true,
        rejectCallsMessage: 'We do not take calls, please write.',
        proxy: null,
      });
      expect((await ring()).status).toBe(202);
      await receiver.waitUntil(
        () => receiver.of(shop.id).filter((r) => r.envelope.event === 'call.received').length === 2,
      );
      expect(receiver.of(shop.id).filter((r) => r.envelope.event === 'call.received')[1].envelope.data).toMatchObject({
        rejected: true,
      });
      await receiver.waitUntil(() => receiver.of(caller.id).some((r) => r.envelope.event === 'message.received'));
      expect(receiver.of(caller.id).find((r) => r.envelope.event === 'message.received')!.envelope.data).toMatchObject({
        from: '4915100000002',
        body: 'We do not take calls, please write.',
      });
    });
  });

  describe('a Baileys device behind a proxy that is down', () => {
    let gateway: Awaited<ReturnType<typeof startTestGateway>>;
    beforeAll(async () => {
      gateway = await startTestGateway({
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        SESSION_RECONNECT_BASE_DELAY_MS: '60000',
      });
    });
    afterAll(() => gateway?.close());

    it('goes reconnecting, with a lastError that names the proxy and not its password', async () => {
      const { api } = gateway;
      const created = await api('POST', '/devices', {
        admin: true,
        json: { id: 'behind-proxy', name: 'p', engine: 'baileys' },
      });
      const device = { id: 'behind-proxy', key: created.body.deviceKey as string };
      const port = await closedPort();
      const set = await api('PATCH', `/devices/${device.id}/settings`, {
        deviceKey: device.key,
        json: { proxy: `http://bob:hunter2@127.0.0.1:${port}` },
      });
      expect(set.body.proxy).toBe(`http://***:***@127.0.0.1:${port}`);
      expect((await api('POST', `/devices/${device.id}/session/open`, { deviceKey: device.key })).status).toBe(202);
      const state = await waitForState(api, device, 'reconnecting', 30_000);
      expect(state.lastError?.code).toBe('proxy'); // classified from the disconnect's detail (src/sessions/reconnect-policy.ts)
      expect(state.lastError?.message).toContain(`through the proxy http://***:***@127.0.0.1:${port}`);
      const history = await api('GET', `/devices/${device.id}/events?limit=1000`, { admin: true });
      expect(JSON.stringify(history.body)).not.toContain('hunter2');
      expect(JSON.stringify(state)).not.toContain('hunter2');
    });
  });
});
