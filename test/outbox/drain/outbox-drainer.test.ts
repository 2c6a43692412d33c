import { writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EngineError } from '../../../src/engines/engine.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import {
  FakeConnection,
  type Harness,
  fixedLookup,
  notConnected,
  outboxHarness,
  text,
  transient,
  watchRateLimiter,
} from '../support/harness.js';
import { eventually } from '../../support/eventually.js';
import { FailingWritesStore } from '../../support/failing-store.js';
import { TestClock } from '../../support/test-clock.js';

const DEVICE = 'shop-1';

describe('the outbox drainer', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('sends in FIFO order only while online, with the ids assigned when queued', async () => {
    h = await outboxHarness();
    const queued = [];
    for (let i = 0; i < 5; i++) queued.push(await h.queue(DEVICE, text(`m${i}`)));
    const connection = new FakeConnection();
    h.drainer.start([DEVICE]);
    // Offline: start() leaves the device alone (no lane, nothing scheduled), so there is nothing to wait for.
    expect((await h.events(DEVICE)).map((e) => e.type)).toEqual(Array(5).fill('OutboxMessageQueued'));
    h.connections.online(DEVICE, connection);
    await eventually(() => connection.sent.length === 5, 'five sends');
    expect(connection.sent.map((m) => m.waMessageId)).toEqual(queued.map((q) => q.waMessageId));
    expect(connection.sent.map((m) => (m.content as { text: string }).text)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    await eventually(async () => (await h!.statuses(DEVICE)).length === 5, 'five statuses');
    const statuses = await h.statuses(DEVICE);
    expect(statuses.map((s) => [s.waMessageId, s.status])).toEqual(queued.map((q) => [q.waMessageId, 'sent']));
    expect(statuses.every((s) => 'outboxId' in s)).toBe(true);
    // Every send was recorded as begun before the engine was asked.
    const types = (await h.events(DEVICE)).map((e) => e.type);
    expect(types.filter((t) => t === 'OutboxMessageSending')).toHaveLength(5);
    expect(types.indexOf('OutboxMessageSending')).toBeLessThan(types.indexOf('MessageStatusChanged'));

    // Queued later, while online: sent without another kick from the session.
    const later = await h.queue(DEVICE, text('late'));
    await eventually(() => connection.sent.some((m) => m.waMessageId === later.waMessageId), 'the late message');
  });

  it('several processes: a try refused for its fence (another process took the device) sends nothing and is reported', async () => {
    const rejected: string[] = [];
    // This process holds the device at lease revision 0; another took it since (revision 1).
    const fences = {
      fence: () => ({ streamId: `lease-${DEVICE}`, revision: 0 }),
      fenceRejected: (deviceId: string) => void rejected.push(deviceId),
    };
    h = await outboxHarness({ fences });
    await h.store.append(`lease-${DEVICE}`, [
      { type: 'LeaseAcquired', data: {} },
      { type: 'LeaseAcquired', data: {} },
    ]);
    await h.queue(DEVICE, text('x'));
    const connection = new FakeConnection();
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(() => rejected.length > 0, 'the refusal reported');
    expect(rejected[0]).toBe(DEVICE);
    expect(connection.sent).toEqual([]);
    expect((await h.events(DEVICE)).map((e) => e.type)).toEqual(['OutboxMessageQueued']);
  });

  it('records a send the engine took once the store takes writes again, without sending it a second time', async () => {
    let failing: FailingWritesStore | undefined;
    h = await outboxHarness({ writesThrough: (store) => (failing = new FailingWritesStore(store)) });
    const { waMessageId } = await h.queue(DEVICE, text('x'));
    let engineDone!: () => void;
    const connection = new FakeConnection();
    connection.script.push(new Promise<void>((resolve) => (engineDone = resolve)));
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(() => connection.sent.length === 1, 'the engine sending');
    // The store fails for a moment, just as the engine answers: `sent` cannot be recorded.
    failing!.failing = true;
    engineDone();
    await eventually(() => failing!.refused > 0, 'the record refused');
    failing!.failing = false;
    await eventually(async () => (await h!.statuses(DEVICE)).length === 1, 'sent recorded');
    expect((await h.statuses(DEVICE))[0]).toMatchObject({ waMessageId, status: 'sent' });
    expect(connection.sent).toHaveLength(1);
    expect((await h.events(DEVICE)).filter((e) => e.type === 'OutboxMessageSending')).toHaveLength(1);
  });

  it('retries a transient error with backoff and the same waMessageId, then fails after the last attempt', async () => {
    h = await outboxHarness({ settings: { maxAttempts: 3 } });
    const connection = new FakeConnection();
    connection.script.push(transient('boom 1'), transient('boom 2'), transient('boom 3'));
    const { waMessageId } = await h.queue(DEVICE, text('x'));
    const second = await h.queue(DEVICE, text('y'));
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(async () => (await h!.statuses(DEVICE)).length === 2, 'two outcomes');
    expect(connection.sent.slice(0, 3).map((m) => m.waMessageId)).toEqual([waMessageId, waMessageId, waMessageId]);
    // FIFO: the second message waited for the first to be done.
    expect(connection.sent[3].waMessageId).toBe(second.waMessageId);
    const [failed, sent] = await h.statuses(DEVICE);
    expect(failed).toMatchObject({ waMessageId, status: 'failed', error: { code: 'engine_error', message: 'boom 3' } });
    expect(sent).toMatchObject({ waMessageId: second.waMessageId, status: 'sent' });
    const attempts = (await h.events(DEVICE)).filter((e) => e.type === 'OutboxAttemptFailed');
    expect(attempts.map((e) => e.data)).toMatchObject([
      { waMessageId, attempt: 1, counted: true, error: { message: 'boom 1' } },
      { waMessageId, attempt: 2, counted: true, error: { message: 'boom 2' } },
    ]);
  });

  it('a send that outlives the engine timeout is not made twice: the next try waits for that call and takes its outcome', async () => {
    h = await outboxHarness({ settings: { maxAttempts: 5 }, engineTimeoutMs: 100 });
    const connection = new FakeConnection();
    let finish!: () => void;
    connection.script.push(new Promise<void>((resolve) => (finish = resolve)));
    const { waMessageId } = await h.queue(DEVICE, text('slow'));
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    // Two tries time out while the one call is still under way.
    await eventually(
      async () => (await h!.events(DEVICE)).filter((e) => e.type === 'OutboxAttemptFailed').length >= 2,
      'two timed-out tries',
    );
    expect(connection.sent).toHaveLength(1);
    finish();
    await eventually(async () => (await h!.statuses(DEVICE)).length === 1, 'the outcome');
    expect(await h.statuses(DEVICE)).toMatchObject([{ waMessageId, status: 'sent' }]);
    expect(connection.sent.map((m) => m.waMessageId)).toEqual([waMessageId]);
    const failures = (await h.events(DEVICE)).filter((e) => e.type === 'OutboxAttemptFailed');
    expect(failures[0].data).toMatchObject({ error: { code: 'timeout' } });
  });

  it('a call that outlived the timeout and then failed is made again on the next try', async () => {
    h = await outboxHarness({ settings: { maxAttempts: 5 }, engineTimeoutMs: 100 });
    const connection = new FakeConnection();
    let fail!: (error: Error) => void;
    connection.script.push(new Promise<void>((_, reject) => (fail = reject)));
    const { waMessageId } = await h.queue(DEVICE, text('slow, then lost'));
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(
      async () => (await h!.events(DEVICE)).some((e) => e.type === 'OutboxAttemptFailed'),
      'a timed-out try',
    );
    fail(transient('the socket closed'));
    await eventually(async () => (await h!.statuses(DEVICE)).length === 1, 'the outcome');
    expect(await h.statuses(DEVICE)).toMatchObject([{ waMessageId, status: 'sent' }]);
    expect(connection.sent.map((m) => m.waMessageId)).toEqual([waMessageId, waMessageId]);
  });

  it('fails a message to a recipient that does not exist at once', async () => {
    h = await outboxHarness();
    const connection = new FakeConnection();
    connection.script.push(new EngineError('recipient_not_found', 'no such number', true));
    const { waMessageId } = await h.queue(DEVICE, text('x'), '4915100000000');
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(async () => (await h!.statuses(DEVICE)).length === 1, 'the outcome');
    expect(connection.sent).toHaveLength(1);
    expect((await h.statuses(DEVICE))[0]).toMatchObject({
      waMessageId,
      status: 'failed',
      recipient: '4915100000000',
      error: { code: 'recipient_not_found' },
    });
  });

  it('does not use up attempts while the session is offline, and goes on once it is online again', async () => {
    h = await outboxHarness({ settings: { maxAttempts: 1 } });
    const first = new FakeConnection();
    // The connection drops while the engine is sending.
    first.send = async (message) => {
      first.sent.push(message);
      h!.connections.offline(DEVICE);
      throw notConnected();
    };
    const { waMessageId } = await h.queue(DEVICE, text('x'));
    h.connections.online(DEVICE, first);
    h.drainer.start([DEVICE]);
    await eventually(
      async () => (await h!.events(DEVICE)).some((e) => e.type === 'OutboxAttemptFailed'),
      'the failed try recorded',
    );
    expect((await h.events(DEVICE)).find((e) => e.type === 'OutboxAttemptFailed')!.data).toMatchObject({
      counted: false,
      error: { code: 'not_connected' },
    });
    const second = new FakeConnection();
    h.connections.online(DEVICE, second);
    await eventually(async () => (await h!.statuses(DEVICE)).length === 1, 'the outcome');
    expect((await h.statuses(DEVICE))[0]).toMatchObject({ waMessageId, status: 'sent' });
    expect(second.sent.map((m) => m.waMessageId)).toEqual([waMessageId]);
    // The lane is sequential: it went on with the second connection only after it let go of the first.
    expect(first.sent).toHaveLength(1);
  });

  it('repairs a crash between "sending" and "sent": the message goes again with the same id', async () => {
    h = await outboxHarness();
    const { outboxId, waMessageId } = await h.queue(DEVICE, text('x'));
    // What a process that died inside the engine call left behind.
    await h.store.append(outboxStream(DEVICE), [
      { type: 'OutboxMessageSending', data: { deviceId: DEVICE, outboxId, waMessageId, attempt: 1 } },
    ]);
    await h.close();
    h = await outboxHarness({ dir: h.dir });
    expect((await h.outboxes.get(DEVICE)).current.head()).toMatchObject({ outboxId, status: 'sending', attempts: 1 });
    const connection = new FakeConnection();
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(async () => (await h!.statuses(DEVICE)).length === 1, 'the outcome');
    expect(connection.sent.map((m) => m.waMessageId)).toEqual([waMessageId]);
    expect((await h.statuses(DEVICE))[0]).toMatchObject({ waMessageId, outboxId, status: 'sent' });
    const sending = (await h.events(DEVICE)).filter((e) => e.type === 'OutboxMessageSending');
    expect(sending.map((e) => e.data.attempt)).toEqual([1, 2]);
  });

  it('records a message a receipt already confirmed as sent instead of sending it again', async () => {
    h = await outboxHarness();
    const { outboxId, waMessageId } = await h.queue(DEVICE, text('x'));
    const { restarted, connection } = await restartAfterReceipt(h, outboxId, waMessageId);
    h = restarted;
    await eventually(async () => (await h!.statuses(DEVICE)).some((s) => s.status === 'sent'), 'sent');
    expect(connection.sent).toEqual([]);
  });

  it('refuses to remove a message while it is being sent (409), and removes queued ones', async () => {
    h = await outboxHarness();
    const connection = new FakeConnection();
    let release!: () => void;
    connection.script.push(new Promise<void>((resolve) => (release = resolve)));
    const first = await h.queue(DEVICE, text('x'));
    const second = await h.queue(DEVICE, text('y'));
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(() => connection.sent.length === 1, 'the first send under way');
    await expect(
      h.outboxes.execute(DEVICE, {
        type: 'CancelMessage',
        deviceId: DEVICE,
        outboxId: first.outboxId,
        now: Date.now(),
      }),
    ).rejects.toMatchObject({
      code: 'message_sending',
    });
    await h.outboxes.execute(DEVICE, {
      type: 'CancelMessage',
      deviceId: DEVICE,
      outboxId: second.outboxId,
      now: Date.now(),
    });
    release();
    await eventually(async () => (await h!.statuses(DEVICE)).length === 2, 'two outcomes');
    expect((await h.statuses(DEVICE)).map((s) => [s.waMessageId, s.status]).sort()).toEqual(
      [
        [first.waMessageId, 'sent'],
        [second.waMessageId, 'cancelled'],
      ].sort(),
    );
    expect(connection.sent.map((m) => m.waMessageId)).toEqual([first.waMessageId]);
  });

  it('holds the rate cap: no more tries start in a minute than allowed', async () => {
    const clock = new TestClock();
    h = await outboxHarness({ settings: { ratePerMinute: 3 }, clock });
    for (let i = 0; i < 6; i++) await h.queue(DEVICE, text(`m${i}`));
    const connection = new FakeConnection();
    h.connections.online(DEVICE, connection);
    const limiter = watchRateLimiter();
    try {
      h.drainer.start([DEVICE]);
      await eventually(() => connection.sent.length === 3, 'three sends');
      // The fourth waits for the window, counted on the stream (so a process that takes the device over counts
      // these three too): the lane sleeps until the first of the three is a minute old. The lane's own limiter
      // started no more either.
      const outbox = await h.outboxes.get(DEVICE);
      expect(outbox.current.rateWait(clock.now(), 3)).toBe(60_000);
      await eventually(() => clock.pending().join() === String(clock.now() + 60_000), 'the lane to wait for the rate');
      expect(limiter.started()).toBe(3);
      expect(connection.sent).toHaveLength(3);
      expect(outbox.current.messages.size).toBe(3);
    } finally {
      limiter.restore();
    }
  });

  it('a revoke waits for the rate the stream counts too (tries another process made)', async () => {
    const clock = new TestClock();
    h = await outboxHarness({ settings: { ratePerMinute: 2 }, clock });
    // Two tries another process started just now, recorded on the device's stream.
    const startedElsewhere = (n: number) => ({
      type: 'OutboxMessageSending',
      data: {
        deviceId: DEVICE,
        outboxId: `elsewhere-${n}`,
        waMessageId: `3EB0ELSEWHERE${n}`,
        attempt: 1,
        startedAt: clock.now(),
      },
    });
    await h.store.append(outboxStream(DEVICE), [startedElsewhere(1), startedElsewhere(2)]);
    await h.outboxes.execute(DEVICE, {
      type: 'RequestRevoke',
      deviceId: DEVICE,
      waMessageId: '3EB0TOREVOKE',
      to: '4915112345678',
    });
    const connection = new FakeConnection();
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    // The lane sleeps until those two are a minute old.
    await eventually(() => clock.pending().join() === String(clock.now() + 60_000), 'the lane to wait for the rate');
    expect(connection.revoked).toEqual([]);
    expect((await h.outboxes.get(DEVICE)).current.revokes.has('3EB0TOREVOKE')).toBe(true);
  });

  it('fetches url media at send time through the guard, detects its type and removes the download', async () => {
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    const server = await serve((path) =>
      path === '/cat.png'
        ? { status: 200, body: png }
        : path === '/big'
          ? { status: 200, body: Buffer.alloc(70 * 1024) }
          : { status: 404, body: Buffer.from('no') },
    );
    try {
      h = await outboxHarness({ allowPrivateNetworks: true });
      const connection = new FakeConnection();
      let seenFile: Buffer | undefined;
      const originalSend = connection.send.bind(connection);
      connection.send = async (message) => {
        if (message.content.kind === 'image')
          seenFile = await import('node:fs/promises').then((fs) =>
            fs.readFile((message.content as { media: { path: string } }).media.path),
          );
        return originalSend(message);
      };
      const ok = await h.queue(DEVICE, {
        kind: 'image',
        media: { source: 'url', url: `${server.url}/cat.png` },
        caption: 'a cat',
      });
      const missing = await h.queue(DEVICE, { kind: 'image', media: { source: 'url', url: `${server.url}/nope.png` } });
      const big = await h.queue(DEVICE, { kind: 'image', media: { source: 'url', url: `${server.url}/big` } });
      h.connections.online(DEVICE, connection);
      h.drainer.start([DEVICE]);
      await eventually(async () => (await h!.statuses(DEVICE)).length === 3, 'three outcomes');
      const statuses = await h.statuses(DEVICE);
      expect(statuses.find((s) => s.waMessageId === ok.waMessageId)).toMatchObject({ status: 'sent' });
      // Each failure says why, in a word.
      expect(statuses.find((s) => s.waMessageId === missing.waMessageId)).toMatchObject({
        status: 'failed',
        error: { code: 'media_unavailable', reason: 'http_status', message: expect.stringContaining('404') },
      });
      expect(statuses.find((s) => s.waMessageId === big.waMessageId)).toMatchObject({
        status: 'failed',
        error: { code: 'media_unavailable', reason: 'too_large' },
      });
      expect(seenFile?.equals(png)).toBe(true);
      expect(connection.sent).toHaveLength(1);
      expect(connection.sent[0].content).toMatchObject({
        kind: 'image',
        caption: 'a cat',
        media: { mimetype: 'image/png', size: png.length },
      });
      const { readdir } = await import('node:fs/promises');
      await eventually(async () => (await readdir(`${h!.dir}/media/${DEVICE}`)).length === 0, 'no download left');
    } finally {
      await server.close();
    }
  });

  it('refuses a media URL that leads to a private address at connect time (media_unavailable)', async () => {
    const server = await serve(() => ({ status: 200, body: Buffer.from('secret') }));
    try {
      // Every name resolves to loopback: only the connect-time check stands between the URL and the server.
      h = await outboxHarness({ allowPrivateNetworks: false, dnsLookup: fixedLookup(['127.0.0.1']) });
      const connection = new FakeConnection();
      const viaName = await h.queue(DEVICE, {
        kind: 'image',
        media: { source: 'url', url: `http://media.example:${server.port}/x.png` },
      });
      const viaLiteral = await h.queue(DEVICE, { kind: 'image', media: { source: 'url', url: `${server.url}/x.png` } });
      h.connections.online(DEVICE, connection);
      h.drainer.start([DEVICE]);
      await eventually(async () => (await h!.statuses(DEVICE)).length === 2, 'two outcomes');
      const statuses = await h.statuses(DEVICE);
      for (const { waMessageId } of [viaName, viaLiteral]) {
        expect(statuses.find((s) => s.waMessageId === waMessageId)).toMatchObject({
          status: 'failed',
          error: {
            code: 'media_unavailable',
            reason: 'refused',
            message: expect.stringContaining('destination refused'),
          },
        });
      }
      expect(server.hits()).toBe(0);
      expect(connection.sent).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('sends stored media from its file and, once sent, keeps the file with the received media (by its waMessageId)', async () => {
    h = await outboxHarness();
    const { outboxId } = await queueStoredFile(h, 'f0000000-0000-4000-8000-000000000001', '3EB0000000000000000001');
    const connection = new FakeConnection();
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(async () => (await h!.statuses(DEVICE)).length === 1, 'sent');
    expect(connection.sent[0].content).toEqual({
      kind: 'file',
      media: { path: h.media.pathOf(DEVICE, outboxId), mimetype: 'text/plain', size: 5, filename: 'a.txt' },
    });
    const { existsSync, readFileSync } = await import('node:fs');
    await eventually(() => !existsSync(h!.media.pathOf(DEVICE, outboxId)), 'the media file moved out of the outbox');
    expect(readFileSync(h.media.keptPathOf(DEVICE, '3EB0000000000000000001'), 'utf8')).toBe('hello');
  });

  it('a sent message whose media cannot be kept is still sent, and the lane goes on', async () => {
    h = await outboxHarness();
    const keep = vi.spyOn(h.media, 'keepSent').mockRejectedValueOnce(new Error('disk gone'));
    const media = await queueStoredFile(h, 'f0000000-0000-4000-8000-000000000002', '3EB0000000000000000002');
    const after = await h.queue(DEVICE, text('next'));
    const connection = new FakeConnection();
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(
      async () => (await h!.statuses(DEVICE)).filter((s) => s.status === 'sent').length === 2,
      'both sent',
    );
    expect(keep).toHaveBeenCalledWith(DEVICE, media.outboxId, media.waMessageId);
    expect((await h.statuses(DEVICE)).map((s) => s.waMessageId)).toEqual([media.waMessageId, after.waMessageId]);
  });

  it('keeps the media of a message a receipt confirmed as sent, too', async () => {
    h = await outboxHarness();
    const { outboxId, waMessageId } = await queueStoredFile(
      h,
      'f0000000-0000-4000-8000-000000000003',
      '3EB0000000000000000003',
    );
    const { restarted, connection } = await restartAfterReceipt(h, outboxId, waMessageId);
    h = restarted;
    const { existsSync, readFileSync } = await import('node:fs');
    await eventually(() => existsSync(h!.media.keptPathOf(DEVICE, waMessageId)), 'the media kept');
    expect(readFileSync(h.media.keptPathOf(DEVICE, waMessageId), 'utf8')).toBe('hello');
    expect(connection.sent).toEqual([]);
  });

  it('revokes a sent message when asked, then records it deleted', async () => {
    h = await outboxHarness();
    const connection = new FakeConnection();
    const { waMessageId, outboxId } = await h.queue(DEVICE, text('x'));
    h.connections.online(DEVICE, connection);
    h.drainer.start([DEVICE]);
    await eventually(async () => (await h!.statuses(DEVICE)).length === 1, 'sent');
    await h.outboxes.execute(DEVICE, {
      type: 'RequestRevoke',
      deviceId: DEVICE,
      waMessageId,
      to: '4915112345678',
      outboxId,
    });
    await eventually(async () => (await h!.statuses(DEVICE)).some((s) => s.status === 'deleted'), 'deleted');
    expect(connection.revoked).toEqual([waMessageId]);
  });
});

/** Queues a file message whose bytes ("hello") are in the outbox's media store. */
/**
 * A try recorded, then the receipt the engine reported (appended by the message sink), then a crash: the
 * gateway starts again on the same data with the device online.
 */
async function restartAfterReceipt(before: Harness, outboxId: string, waMessageId: string) {
  await before.store.append(outboxStream(DEVICE), [
    { type: 'OutboxMessageSending', data: { deviceId: DEVICE, outboxId, waMessageId, attempt: 1 } },
  ]);
  await before.store.append(outboxStream(DEVICE), [
    {
      type: 'MessageStatusChanged',
      data: { deviceId: DEVICE, waMessageId, status: 'delivered', recipient: '4915112345678', timestamp: 1 },
    },
  ]);
  await before.close();
  const restarted = await outboxHarness({ dir: before.dir });
  const connection = new FakeConnection();
  restarted.connections.online(DEVICE, connection);
  restarted.drainer.start([DEVICE]);
  return { restarted, connection };
}

async function queueStoredFile(h: Harness, outboxId: string, waMessageId: string) {
  await h.media.ensureDeviceDir(DEVICE);
  await writeFile(h.media.pathOf(DEVICE, outboxId), 'hello');
  await h.outboxes.execute(DEVICE, {
    type: 'QueueMessage',
    deviceId: DEVICE,
    message: {
      outboxId,
      waMessageId,
      to: '4915112345678',
      content: { kind: 'file', media: { source: 'stored', mimetype: 'text/plain', size: 5, filename: 'a.txt' } },
      createdAt: new Date().toISOString(),
    },
  });
  return { outboxId, waMessageId };
}

interface TestServer {
  url: string;
  port: number;
  hits(): number;
  close(): Promise<void>;
}

async function serve(answer: (path: string) => { status: number; body: Buffer }): Promise<TestServer> {
  let hits = 0;
  const server: Server = createServer((request, response) => {
    hits++;
    const { status, body } = answer(request.url ?? '/');
    response.writeHead(status, { 'content-length': body.length });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits: () => hits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
