import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY, startTestGateway } from '../support/gateway.js';
import { createSandboxDevice, type TestDevice } from '../support/sessions.js';
import { TestClock } from '../support/test-clock.js';
import { parseRaw, rawExchange } from '../support/raw-http.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

interface Frame {
  id: number;
  event: string;
  deviceId: string;
  eventId: string;
  data: { body?: string };
}

/** A WebSocket client that keeps what it got; `status` is the HTTP status when the upgrade was refused. */
class WsClient {
  readonly frames: Frame[] = [];
  status = 0;
  closed = false;
  closeCode = 0;

  static open(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const client = new WsClient();
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve) => {
      ws.on('open', () => {
        client.status = 101;
        client.ws = ws;
        resolve(client);
      });
      ws.on('message', (data: Buffer) => client.frames.push(JSON.parse(data.toString('utf8')) as Frame));
      ws.on('close', (code: number) => {
        client.closed = true;
        client.closeCode = code;
      });
      ws.on('unexpected-response', (_request, response) => {
        client.status = response.statusCode ?? 0;
        client.closed = true;
        response.resume();
        resolve(client);
      });
      ws.on('error', () => {
        client.closed = true;
        resolve(client);
      });
    });
  }

  ws: WebSocket | undefined;
  bodies = () => this.frames.map((frame) => frame.data.body);
  waitForCount = (count: number) => eventually(() => this.frames.length >= count, `${count} frames`);
  close(): void {
    this.ws?.terminate();
  }
}

describe('WebSocket stream', () => {
  let gateway: TestGateway;
  let a: TestDevice;
  let b: TestDevice;
  let ws: string;
  const clock = new TestClock({ running: true });
  const clients: WsClient[] = [];
  const open = async (path: string, headers: Record<string, string> = {}) => {
    const client = await WsClient.open(`${ws}${path}`, headers);
    clients.push(client);
    return client;
  };
  const ticket = async (headers: { admin?: boolean; deviceKey?: string }) => {
    const answer = await gateway.api('POST', '/stream/tickets', headers);
    expect(answer.status).toBe(201);
    return answer.body as { ticket: string; expiresAt: string };
  };
  const say = (deviceId: string, body: string) =>
    gateway.store.append(inboxStream(deviceId), [
      {
        id: randomUUID(),
        type: 'MessageReceived',
        data: {
          deviceId,
          from: '4915122223333',
          type: 'text',
          body,
          timestamp: 1_700_000_000,
          waMessageId: `3EB0${randomUUID().replaceAll('-', '').slice(0, 18).toUpperCase()}`,
        },
      },
    ]);

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' }, { clock });
    ws = gateway.url.replace('http:', 'ws:');
    a = await createSandboxDevice(gateway.api, 'ws-a');
    b = await createSandboxDevice(gateway.api, 'ws-b');
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await gateway.close();
  });

  it('streams a device’s events as JSON with the key header, and resumes exactly after an id', async () => {
    const live = await open(`/devices/${a.id}/ws`, { 'x-device-key': a.key });
    expect(live.status).toBe(101);
    await say(a.id, 'one');
    await say(b.id, 'not for a');
    await say(a.id, 'two');
    await say(a.id, 'three');
    await live.waitForCount(3);
    expect(live.bodies()).toEqual(['one', 'two', 'three']);
    expect(live.frames[0]).toMatchObject({ event: 'message.received', deviceId: a.id });
    expect(live.frames[0].eventId).toMatch(/^[0-9a-f-]{36}$/);

    const resumed = await open(`/devices/${a.id}/ws?after=${live.frames[0].id}`, { 'x-device-key': a.key });
    await resumed.waitForCount(2);
    await say(a.id, 'four');
    await resumed.waitForCount(3);
    expect(resumed.bodies()).toEqual(['two', 'three', 'four']);
    await live.waitForCount(4);
    expect(resumed.frames.map((f) => f.id)).toEqual(live.frames.slice(1).map((f) => f.id));
  });

  it('takes a ticket once, within 30 s; keys never go in the URL', async () => {
    const first = await ticket({ deviceKey: a.key });
    expect(Date.parse(first.expiresAt) - clock.now()).toBeLessThanOrEqual(30_000);
    const withTicket = await open(`/devices/${a.id}/ws?ticket=${first.ticket}`);
    expect(withTicket.status).toBe(101);
    await say(a.id, 'by ticket');
    await withTicket.waitForCount(1);
    expect(withTicket.bodies()).toEqual(['by ticket']);

    // Used: refused the second time.
    expect((await open(`/devices/${a.id}/ws?ticket=${first.ticket}`)).status).toBe(401);

    // Expired: 30 s later it is refused, and used up too.
    const late = await ticket({ deviceKey: a.key });
    await clock.advance(30_001);
    expect((await open(`/devices/${a.id}/ws?ticket=${late.ticket}`)).status).toBe(401);
    const inTime = await ticket({ deviceKey: a.key });
    await clock.advance(29_000);
    expect((await open(`/devices/${a.id}/ws?ticket=${inTime.ticket}`)).status).toBe(101);

    // No key and no ticket, or a made-up ticket.
    expect((await open(`/devices/${a.id}/ws`)).status).toBe(401);
    expect((await open(`/devices/${a.id}/ws?ticket=st_madeup`)).status).toBe(401);
  });

  it("a device key cannot read another device's events, nor every device's", async () => {
    expect((await open(`/devices/${b.id}/ws`, { 'x-device-key': a.key })).status).toBe(401);
    const aTicket = await ticket({ deviceKey: a.key });
    expect((await open(`/devices/${b.id}/ws?ticket=${aTicket.ticket}`)).status).toBe(401);
    expect((await open('/ws', { 'x-device-key': a.key })).status).toBe(403);
    const another = await ticket({ deviceKey: a.key });
    expect((await open(`/ws?ticket=${another.ticket}`)).status).toBe(403);
    // The admin's ticket reads every device.
    const adminTicket = await ticket({ admin: true });
    const all = await open(`/ws?ticket=${adminTicket.ticket}`);
    expect(all.status).toBe(101);
    await say(a.id, 'to a');
    await say(b.id, 'to b');
    await all.waitForCount(2);
    expect(all.frames.map((f) => f.deviceId)).toEqual([a.id, b.id]);
  });

  it('closes when the scoped key it was opened with is deleted, also when opened by ticket', async () => {
    const made = await gateway.api('POST', `/devices/${a.id}/keys`, {
      deviceKey: a.key,
      json: { name: 'reader', scopes: ['read'] },
    });
    const byHeader = await open(`/devices/${a.id}/ws`, { 'x-device-key': made.body.key });
    const byTicket = await open(`/devices/${a.id}/ws?ticket=${(await ticket({ deviceKey: made.body.key })).ticket}`);
    const pendingTicket = await ticket({ deviceKey: made.body.key });
    expect([byHeader.status, byTicket.status]).toEqual([101, 101]);
    expect((await gateway.api('DELETE', `/devices/${a.id}/keys/${made.body.keyId}`, { admin: true })).status).toBe(204);
    await eventually(() => byHeader.closed && byTicket.closed, 'both streams to close');
    expect(byHeader.closeCode).toBe(1008);
    // A ticket of a deleted key no longer holds.
    expect((await open(`/devices/${a.id}/ws?ticket=${pendingTicket.ticket}`)).status).toBe(401);
    // A key without `read` gets no ticket.
    const sender = await gateway.api('POST', `/devices/${a.id}/keys`, {
      deviceKey: a.key,
      json: { name: 'sender', scopes: ['send'] },
    });
    const refused = await gateway.api('POST', '/stream/tickets', { deviceKey: sender.body.key });
    expect(refused.body).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'read' });
  });

  it('closes when the device key is rotated out, by header and by ticket; the new key streams on', async () => {
    const device = await createSandboxDevice(gateway.api, 'ws-rotated');
    const byHeader = await open(`/devices/${device.id}/ws`, { 'x-device-key': device.key });
    const byTicket = await open(`/devices/${device.id}/ws?ticket=${(await ticket({ deviceKey: device.key })).ticket}`);
    const pendingTicket = await ticket({ deviceKey: device.key });
    expect([byHeader.status, byTicket.status]).toEqual([101, 101]);
    await say(device.id, 'before the rotation');
    await byHeader.waitForCount(1);
    await byTicket.waitForCount(1);
    const rotated = await gateway.api('PATCH', `/devices/${device.id}`, { admin: true, json: { rotateKey: true } });
    expect(rotated.status).toBe(200);
    await eventually(() => byHeader.closed && byTicket.closed, 'both streams to close');
    expect([byHeader.closeCode, byTicket.closeCode]).toEqual([1008, 1008]);
    expect((await open(`/devices/${device.id}/ws?ticket=${pendingTicket.ticket}`)).status).toBe(401);
    expect((await open(`/devices/${device.id}/ws`, { 'x-device-key': device.key })).status).toBe(401);
    const renewed = await open(`/devices/${device.id}/ws`, { 'x-device-key': rotated.body.deviceKey });
    await say(device.id, 'after the rotation');
    await renewed.waitForCount(1);
    expect(renewed.bodies()).toEqual(['after the rotation']);
    expect([byHeader.bodies(), byTicket.bodies()]).toEqual([['before the rotation'], ['before the rotation']]);
  });

  it('takes no key in the URL: a key where a ticket goes, or in any other parameter, opens nothing', async () => {
    expect((await open(`/devices/${a.id}/ws?ticket=${a.key}`)).status).toBe(401);
    expect((await open(`/ws?ticket=${ADMIN_KEY}`)).status).toBe(401);
    for (const name of ['key', 'apiKey', 'api_key', 'token', 'deviceKey'])
      expect([400, 401]).toContain((await open(`/devices/${a.id}/ws?${name}=${a.key}`)).status);
  });

  it('answers a plain request 426, and bad input 400, with problem+json', async () => {
    const plain = await gateway.api('GET', `/devices/${a.id}/ws`, { deviceKey: a.key });
    expect(plain.status).toBe(426);
    expect(plain.body.code).toBe('upgrade_required');
    expect((await open(`/devices/${a.id}/ws?after=abc`, { 'x-device-key': a.key })).status).toBe(400);
    expect((await open(`/devices/${a.id}/ws?after=999999999`, { 'x-device-key': a.key })).status).toBe(400);
    expect((await open(`/devices/nope/ws`, { 'x-admin-key': ADMIN_KEY })).status).toBe(404);
  });

  const upgradeRequest = (path: string, headers: Record<string, string>) =>
    [
      `GET ${path} HTTP/1.1`,
      'Host: 127.0.0.1',
      'Connection: Upgrade',
      'Upgrade: websocket',
      `X-Admin-Key: ${ADMIN_KEY}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      '',
      '',
    ].join('\r\n');
  const GOOD_KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

  it('answers a bad handshake (key, version) 400 with problem+json, and the request ends', async () => {
    for (const headers of <Record<string, string>[]>[
      { 'Sec-WebSocket-Version': '13' },
      { 'Sec-WebSocket-Key': 'not-base64', 'Sec-WebSocket-Version': '13' },
      { 'Sec-WebSocket-Key': GOOD_KEY, 'Sec-WebSocket-Version': '12' },
      { 'Sec-WebSocket-Key': GOOD_KEY },
    ]) {
      const answer = parseRaw(await rawExchange(gateway.url, upgradeRequest('/ws', headers)));
      expect(answer.status).toBe(400);
      expect(answer.type).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ code: 'invalid_request' });
    }
  });
});

describe('a slow WebSocket reader', () => {
  it('is cut off without slowing another reader, and resumes exactly where it was cut', async () => {
    const gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', STREAM_MAX_BUFFER_BYTES: '262144' });
    const clients: WsClient[] = [];
    try {
      const device = await createSandboxDevice(gateway.api, 'ws-slow');
      const url = `${gateway.url.replace('http:', 'ws:')}/devices/${device.id}/ws`;
      const headers = { 'x-device-key': device.key };
      const open = async (at: string) => {
        const client = await WsClient.open(at, headers);
        clients.push(client);
        return client;
      };
      // A reader that stops reading: its socket takes no more bytes once the kernel's buffers are full.
      const stalled = await open(url);
      stalled.ws!.pause();
      const fast = await open(url);
      await eventually(() => gateway.stream.stats().live === 2, 'both readers live');

      // 12 MB of events, 40 KB to an append: far more than the socket buffers and the 256 KiB allowance hold.
      const body = 'x'.repeat(4096);
      for (let start = 0; start < 3000; start += 10)
        await gateway.store.append(
          inboxStream(device.id),
          Array.from({ length: 10 }, (_, i) => ({
            id: randomUUID(),
            type: 'MessageReceived',
            data: {
              deviceId: device.id,
              from: '4915122223333',
              type: 'text',
              body: `${start + i} ${body}`,
              timestamp: 1_700_000_000,
              waMessageId: `3EB0${randomUUID().replaceAll('-', '').slice(0, 18).toUpperCase()}`,
            },
          })),
        );
      const last = await eventually(
        () => fast.frames.find((frame) => frame.data.body?.startsWith('2999 ')),
        'every event at the fast reader',
      );
      await eventually(() => gateway.stream.stats().disconnectedSlow === 1, 'the stalled reader cut off');

      // What the stalled reader got is a prefix of what the fast one got; resuming after its last id gives the rest.
      stalled.ws!.resume();
      await eventually(() => stalled.closed, 'the stalled reader sees the end');
      const ids = (client: WsClient) => client.frames.map((frame) => frame.id);
      const got = ids(stalled);
      expect(got.length).toBeLessThan(ids(fast).length);
      expect(got).toEqual(ids(fast).slice(0, got.length));
      const after = got.at(-1) ?? ids(fast)[0] - 1;
      const resumed = await open(`${url}?after=${after}`);
      await eventually(() => resumed.frames.at(-1)?.id === last.id, 'the resumed reader at the last event');
      expect([...got, ...ids(resumed)]).toEqual(ids(fast).slice(0, ids(fast).indexOf(last.id) + 1));
    } finally {
      for (const client of clients) client.close();
      await gateway.close();
    }
  });
});
