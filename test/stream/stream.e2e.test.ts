import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { type IncomingMessage, get } from 'node:http';
import { createParser } from 'eventsource-parser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { createSandboxDevice, type TestDevice } from '../support/sessions.js';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY, startTestGateway, tempDir } from '../support/gateway.js';
import { TestReceiver } from '../webhooks/support/receiver.js';
import { SseClient } from './support/sse-client.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

const admin = { 'x-admin-key': ADMIN_KEY };

/** Appends `count` inbound messages to the device's inbox, as the engine's message sink would. */
async function receive(
  store: EventStore,
  deviceId: string,
  count: number,
  bodyBytes = 16,
  perAppend = 100,
): Promise<void> {
  const body = 'x'.repeat(bodyBytes);
  for (let start = 0; start < count; start += perAppend) {
    const events = Array.from({ length: Math.min(perAppend, count - start) }, (_, i) => ({
      id: randomUUID(),
      type: 'MessageReceived',
      data: {
        deviceId,
        from: '4915122223333',
        type: 'text',
        body: `${start + i} ${body}`,
        timestamp: 1_700_000_000,
        waMessageId: `3EB0${randomUUID().replaceAll('-', '').slice(0, 18).toUpperCase()}`,
      },
    }));
    await store.append(inboxStream(deviceId), events);
  }
}

describe('live event stream', () => {
  let gateway: TestGateway;
  let a: TestDevice;
  let b: TestDevice;
  const clients: SseClient[] = [];
  const open = async (path: string, headers: Record<string, string>) => {
    const client = await SseClient.open(`${gateway.url}${path}`, headers);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', STREAM_HEARTBEAT: '100ms' });
    a = await createSandboxDevice(gateway.api, 'stream-a');
    b = await createSandboxDevice(gateway.api, 'stream-b');
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('gives a device key only its device, and the admin every device', async () => {
    const ofA = await open(`/devices/${a.id}/stream`, { 'x-device-key': a.key });
    const ofB = await open(`/devices/${b.id}/stream`, { 'x-device-key': b.key });
    const all = await open('/stream', admin);
    const adminOnA = await open(`/devices/${a.id}/stream`, admin);
    expect([ofA.status, ofB.status, all.status, adminOnA.status]).toEqual([200, 200, 200, 200]);
    expect((await open(`/devices/${b.id}/stream`, { 'x-device-key': a.key })).status).toBe(401);
    expect((await open('/stream', { 'x-device-key': a.key })).status).toBe(403);
    expect((await open('/stream', {})).status).toBe(401);

    await receive(gateway.store, a.id, 3);
    await receive(gateway.store, b.id, 2);
    // A real session change too: the engine's QR shows up as session.state.
    expect((await gateway.api('POST', `/devices/${a.id}/session/open`, { deviceKey: a.key })).status).toBe(202);
    await all.waitFor(
      (events) => events.filter((e) => e.event === 'session.state' && e.envelope.data.state === 'qr').length === 1,
      'the qr state',
    );
    await ofA.waitFor(
      (events) => events.some((e) => e.envelope.data.state === 'qr'),
      'the qr state on the device stream',
    );
    await ofB.waitForCount(2);

    const ofDevice = (id: string) => all.events.filter((e) => e.envelope.deviceId === id).map((e) => e.id);
    expect(new Set(all.events.map((e) => e.envelope.deviceId))).toEqual(new Set([a.id, b.id]));
    expect(ofA.ids).toEqual(ofDevice(a.id).slice(0, ofA.ids.length));
    expect(ofA.events.every((e) => e.envelope.deviceId === a.id)).toBe(true);
    expect(ofB.ids).toEqual(ofDevice(b.id));
    expect(adminOnA.ids).toEqual(ofA.ids.slice(0, adminOnA.ids.length));
    // The envelope is the webhook's, and the SSE fields match it.
    const first = ofB.events[0];
    expect(first.event).toBe('message.received');
    expect(first.envelope).toMatchObject({
      event: 'message.received',
      deviceId: b.id,
      data: { deviceId: b.id, from: '4915122223333', type: 'text' },
    });
    expect(Object.keys(first.envelope).sort()).toEqual(['data', 'deviceId', 'event', 'id', 'timestamp']);
    await gateway.api('POST', `/devices/${a.id}/session/close`, { deviceKey: a.key, json: {} });
  });

  it('resumes after a disconnect with exactly the missed events, in order (Last-Event-ID and ?after=)', async () => {
    const reference = await open('/stream', admin);
    const first = await open(`/devices/${a.id}/stream`, { 'x-device-key': a.key });
    await receive(gateway.store, a.id, 5);
    await first.waitForCount(5);
    await first.close();
    await receive(gateway.store, a.id, 7);
    await receive(gateway.store, b.id, 4);
    const resumed = await open(`/devices/${a.id}/stream`, {
      'x-device-key': a.key,
      'last-event-id': String(first.lastId),
    });
    // ?after= names the start; a Last-Event-ID (what EventSource sends on reconnect) wins over it.
    const byQuery = await open(`/devices/${a.id}/stream?after=${first.lastId}`, { 'x-device-key': a.key });
    const headerWins = await open(`/devices/${a.id}/stream?after=0`, {
      'x-device-key': a.key,
      'last-event-id': String(first.lastId),
    });
    await receive(gateway.store, a.id, 3);
    await reference.waitForCount(19);
    const expected = reference.events.filter((e) => e.envelope.deviceId === a.id).map((e) => e.id);
    for (const client of [resumed, byQuery, headerWins]) await client.waitForCount(10);
    expect([...first.ids, ...resumed.ids]).toEqual(expected);
    expect(byQuery.ids).toEqual(resumed.ids);
    expect(headerWins.ids).toEqual(resumed.ids);
    expect(new Set(expected).size).toBe(15);
  });

  it('filters kinds with ?events= and refuses bad resume points and kinds', async () => {
    const onlyStatus = await open(`/devices/${a.id}/stream?events=session.state`, { 'x-device-key': a.key });
    const both = await open(`/devices/${a.id}/stream?events=message.received,session.state`, { 'x-device-key': a.key });
    await receive(gateway.store, a.id, 2);
    await gateway.api('POST', `/devices/${a.id}/session/open`, { deviceKey: a.key });
    await onlyStatus.waitFor((events) => events.some((e) => e.envelope.data.state === 'qr'), 'the qr state');
    await both.waitFor((events) => events.some((e) => e.envelope.data.state === 'qr'), 'the qr state');
    expect(onlyStatus.events.every((e) => e.event === 'session.state')).toBe(true);
    expect(both.events.filter((e) => e.event === 'message.received')).toHaveLength(2);
    await gateway.api('POST', `/devices/${a.id}/session/close`, { deviceKey: a.key, json: {} });

    for (const [path, headers] of [
      ['/stream?events=message.sent', admin],
      ['/stream?events=', admin],
      ['/stream?after=-1', admin],
      ['/stream?after=abc', admin],
      ['/stream?after=9007199254740992', admin],
      ['/stream', { ...admin, 'last-event-id': 'abc' }],
      ['/stream', { ...admin, 'last-event-id': '9007199254740992' }],
    ] as const) {
      const answer = await fetch(`${gateway.url}${path}`, { headers });
      expect(answer.status, path).toBe(400);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(((await answer.json()) as { code: string }).code).toBe('invalid_request');
    }
    expect((await fetch(`${gateway.url}/devices/nobody/stream`, { headers: admin })).status).toBe(404);
    // A position past the end of this log (up to the largest one a client can name): the client followed another
    // log (a restored data directory); it is told, rather than sent nothing until this log grows that far.
    for (const [path, headers] of [
      ['/stream?after=9007199254740991', admin],
      ['/stream', { ...admin, 'last-event-id': '9007199254740991' }],
      [
        `/devices/${a.id}/stream`,
        { 'x-device-key': a.key, 'last-event-id': String(gateway.stream.position + 1_000_000) },
      ],
    ] as const) {
      const answer = await fetch(`${gateway.url}${path}`, { headers });
      expect(answer.status, path).toBe(400);
      expect(((await answer.json()) as { detail: string }).detail).toContain(
        'is not the position of an event of this log (past its end',
      );
    }
  });

  it('sends a comment line on idle streams', async () => {
    const idle = await open(`/devices/${b.id}/stream?events=session.state`, { 'x-device-key': b.key });
    await eventually(() => idle.comments >= 2, 'two heartbeats');
    expect(idle.events).toEqual([]);
  });

  it("answers HEAD with the stream's headers and ends, on both routes", async () => {
    for (const [path, headers] of [
      ['/stream', admin],
      [`/devices/${a.id}/stream`, { 'x-device-key': a.key }],
    ] as const) {
      const response = await fetch(`${gateway.url}${path}`, {
        method: 'HEAD',
        headers,
        signal: AbortSignal.timeout(5_000),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(await response.text()).toBe('');
    }
  });

  it('documents both routes as text/event-stream', async () => {
    const { body } = await gateway.api('GET', '/openapi.json');
    for (const path of ['/stream', '/devices/{deviceId}/stream']) {
      expect(Object.keys(body.paths[path].get.responses['200'].content)).toEqual(['text/event-stream']);
      expect(body.paths[path].get.description).toContain('Last-Event-ID');
    }
  });
});

describe('a live stream opened with a device key', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', STREAM_HEARTBEAT: '100ms' });
  });
  afterAll(async () => gateway.close());

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
  const bodies = (client: SseClient) => client.events.map((e) => e.envelope.data.body);

  it('ends when the key is rotated ("the old key stops working at once"); the admin stream and the new key go on', async () => {
    const device = await createSandboxDevice(gateway.api, 'rotated');
    const withOldKey = await SseClient.open(`${gateway.url}/devices/${device.id}/stream`, {
      'x-device-key': device.key,
    });
    const asAdmin = await SseClient.open(`${gateway.url}/devices/${device.id}/stream`, admin);
    try {
      expect([withOldKey.status, asAdmin.status]).toEqual([200, 200]);
      await say(device.id, 'before the rotation');
      await withOldKey.waitForCount(1);

      const rotated = await gateway.api('PATCH', `/devices/${device.id}`, { admin: true, json: { rotateKey: true } });
      expect(rotated.status).toBe(200);
      await eventually(() => withOldKey.ended, 'the stream of the rotated-out key to end');
      await say(device.id, 'after the rotation');
      await asAdmin.waitFor((events) => events.length === 2, 'the admin stream to go on');
      expect(bodies(withOldKey)).toEqual(['before the rotation']);

      // Resuming with the old key is refused; with the new one it reads what came after.
      const resumeOld = await SseClient.open(`${gateway.url}/devices/${device.id}/stream`, {
        'x-device-key': device.key,
        'last-event-id': String(withOldKey.lastId),
      });
      expect(resumeOld.status).toBe(401);
      const resumeNew = await SseClient.open(`${gateway.url}/devices/${device.id}/stream`, {
        'x-device-key': rotated.body.deviceKey,
        'last-event-id': String(withOldKey.lastId),
      });
      await resumeNew.waitForCount(1);
      expect(bodies(resumeNew)).toEqual(['after the rotation']);
      expect(resumeNew.ended).toBe(false);
      await resumeNew.close();
    } finally {
      await Promise.all([withOldKey.close(), asAdmin.close()]);
    }
  });

  it('ends when the device is deleted', async () => {
    const device = await createSandboxDevice(gateway.api, 'deleted');
    const stream = await SseClient.open(`${gateway.url}/devices/${device.id}/stream`, { 'x-device-key': device.key });
    try {
      expect(stream.status).toBe(200);
      expect((await gateway.api('DELETE', `/devices/${device.id}`, { admin: true })).status).toBe(204);
      await eventually(() => stream.ended, 'the stream of the deleted device to end');
    } finally {
      await stream.close();
    }
  });
});

describe('live event stream across a restart', () => {
  it('resumes from the last id seen before the gateway stopped, with nothing lost or repeated', async () => {
    const dataDir = tempDir();
    const first = await startTestGateway({ DATA_DIR: dataDir, DEFAULT_ENGINE: 'sandbox' });
    const device = await createSandboxDevice(first.api, 'restart');
    const before = await SseClient.open(`${first.url}/devices/${device.id}/stream`, { 'x-device-key': device.key });
    await receive(first.store, device.id, 4);
    await before.waitForCount(4);
    await before.close();
    await receive(first.store, device.id, 3); // missed while away, before the stop
    await first.close();

    const second = await startTestGateway({ DATA_DIR: dataDir, DEFAULT_ENGINE: 'sandbox' });
    try {
      await receive(second.store, device.id, 2); // missed while away, after the restart
      const resumed = await SseClient.open(`${second.url}/devices/${device.id}/stream`, {
        'x-device-key': device.key,
        'last-event-id': String(before.lastId),
      });
      const everything = await SseClient.open(`${second.url}/stream?after=0`, admin);
      await receive(second.store, device.id, 1); // live after the resume
      await resumed.waitForCount(6);
      await everything.waitForCount(10);
      expect([...before.ids, ...resumed.ids]).toEqual(everything.ids);
      expect(resumed.events.map((e) => e.envelope.data.body.split(' ')[0])).toEqual(['0', '1', '2', '0', '1', '0']);
      await Promise.all([resumed.close(), everything.close()]);
    } finally {
      await second.close();
    }
  });
});

describe('a slow stream reader', () => {
  it('is disconnected without slowing other readers or webhooks, and resumes where it was cut', async () => {
    const gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      STREAM_MAX_BUFFER_BYTES: '262144',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const receiver = await TestReceiver.start();
    try {
      const noisy = await createSandboxDevice(gateway.api, 'noisy');
      const hooked = await createSandboxDevice(gateway.api, 'hooked');
      const put = await gateway.api('PUT', `/devices/${hooked.id}/hooks`, {
        deviceKey: hooked.key,
        json: { url: receiver.url, events: ['message.received'] },
      });
      expect(put.status).toBe(200);

      // A reader that never reads: its socket stops taking bytes once the kernel's buffers are full.
      const stalled = await new Promise<IncomingMessage>((resolve, reject) => {
        get(`${gateway.url}/stream`, { headers: admin, agent: false }, resolve).once('error', reject);
      });
      stalled.pause();
      const fast = await SseClient.open(`${gateway.url}/stream`, admin);
      await eventually(() => gateway.stream.stats().live === 2, 'both readers to be live');

      // 12 MB of events, 40 KB at a time: far more than the socket buffers and the 256 KiB allowance hold.
      await receive(gateway.store, noisy.id, 3000, 4096, 10);
      await receive(gateway.store, hooked.id, 1);
      await fast.waitForCount(3001);
      await receiver.waitUntil(() => receiver.of(hooked.id).length === 1);
      await eventually(() => gateway.stream.stats().disconnectedSlow === 1, 'the stalled reader to be cut off');
      expect(receiver.of(hooked.id)[0].envelope.data.body).toMatch(/^0 /);

      // What the stalled reader did get is a prefix; resuming from its last id gives exactly the rest.
      const got: number[] = [];
      const parser = createParser({ onEvent: (message) => got.push(Number(message.id)) });
      stalled.setEncoding('utf8');
      stalled.on('data', (text: string) => parser.feed(text));
      stalled.on('error', () => undefined); // the cut shows as an aborted response
      const closed = new Promise((resolve) => stalled.once('close', resolve));
      stalled.resume();
      await closed;
      expect(got.length).toBeGreaterThan(0);
      expect(got.length).toBeLessThan(3001);
      expect(got).toEqual(fast.ids.slice(0, got.length));
      const resumed = await SseClient.open(`${gateway.url}/stream`, { ...admin, 'last-event-id': String(got.at(-1)) });
      await resumed.waitForCount(3001 - got.length);
      expect([...got, ...resumed.ids]).toEqual(fast.ids);
      await Promise.all([fast.close(), resumed.close()]);
    } finally {
      await receiver.close();
      await gateway.close();
    }
  });

  it('is cut with a TCP reset: the reader sees ECONNRESET, and the kernel keeps nothing of it for the server', async () => {
    const gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', STREAM_MAX_BUFFER_BYTES: '262144' });
    try {
      const noisy = await createSandboxDevice(gateway.api, 'noisy');
      const gatewayPort = Number(new URL(gateway.url).port);
      const reader = connect(gatewayPort, '127.0.0.1');
      await once(reader, 'connect');
      reader.write(`GET /stream HTTP/1.1\r\nHost: x\r\nX-Admin-Key: ${ADMIN_KEY}\r\n\r\n`);
      reader.pause(); // never reads
      const readerPort = reader.localPort!;
      await eventually(() => gateway.stream.stats().live === 1, 'the reader to be live');
      await receive(gateway.store, noisy.id, 3000, 4096, 10);
      await eventually(() => gateway.stream.stats().disconnectedSlow === 1, 'the reader to be cut off');
      // A plain close would leave the server's end in FIN-WAIT-1, holding its unsent megabytes until the reader
      // read them or TCP gave up; a reset frees them at once.
      await eventually(
        () => serverEndOf(gatewayPort, readerPort) === undefined,
        "the server's end of the connection gone from the kernel",
      );
      // The reader's kernel took the reset: its next write fails with it (after a plain close it would go through).
      // Its next read would not say it to a node client: libuv reports a hang-up after a partial read as the end.
      const failed = new Promise<NodeJS.ErrnoException>((resolve) => reader.once('error', resolve));
      reader.write('x');
      expect((await failed).code).toBe('ECONNRESET');
    } finally {
      await gateway.close();
    }
  });
});

/** The state (hex, as /proc/net/tcp says it) of the kernel's socket at 127.0.0.1:`local` connected to `remote`. */
function serverEndOf(local: number, remote: number): string | undefined {
  const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, localAddress, remoteAddress, state] = line.trim().split(/\s+/);
    if (localAddress?.endsWith(`:${hexPort(local)}`) && remoteAddress?.endsWith(`:${hexPort(remote)}`)) return state;
  }
  return undefined;
}
