import Database from 'better-sqlite3';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/child-gateway.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { WebhooksReadModel } from '../../src/webhooks/webhooks-read-model.js';
import { webhooksStream } from '../../src/webhooks/delivery-events.js';
import { createDeliveryLaneCommands } from '../../src/webhooks/webhooks.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { appendReceived, appendSessionState, appendStatus, messageReceived } from './support/events.js';
import { eventually } from '../support/eventually.js';
import { TestReceiver } from './support/receiver.js';
import { TestClock } from '../support/test-clock.js';

const RETRY_DELAY_MS = 300;

describe('webhook delivery', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let receiver: TestReceiver;
  const keys = new Map<string, string>();
  const secrets = new Map<string, string>();
  // Running: retries come due as time passes; a test moves it on past a backoff too long to wait for.
  const clock = new TestClock({ running: true });

  beforeAll(async () => {
    gateway = await startTestGateway(
      {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_SCHEDULE: `${RETRY_DELAY_MS}ms,${RETRY_DELAY_MS}ms,${RETRY_DELAY_MS}ms`,
        WEBHOOK_RETRY_JITTER: '0',
        WEBHOOK_TIMEOUT_MS: '1000',
      },
      { clock },
    );
    api = gateway.api;
    receiver = await TestReceiver.start();
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  async function device(id: string, url: string, events: string[] = ['message.received']): Promise<void> {
    const created = await api('POST', '/devices', { admin: true, json: { id, name: id } });
    expect(created.status).toBe(201);
    keys.set(id, created.body.deviceKey);
    await configure(id, url, events);
  }

  async function configure(id: string, url: string, events: string[]): Promise<void> {
    const put = await api('PUT', `/devices/${id}/hooks`, { deviceKey: keys.get(id), json: { url, events } });
    expect(put.status).toBe(200);
    secrets.set(id, put.body.secret);
  }

  const deliveries = async (id: string, query = '') =>
    (await api('GET', `/devices/${id}/hooks/deliveries${query}`, { deviceKey: keys.get(id) })).body;
  const delivery = async (id: string, deliveryId: string) =>
    (await deliveries(id, '?limit=500')).items.find((d: { id: string }) => d.id === deliveryId);

  it('sends every kind as a signed envelope, only kinds the hook lists and only events after it was set', async () => {
    await api('POST', '/devices', { admin: true, json: { id: 'kinds', name: 'kinds' } }).then((r) =>
      keys.set('kinds', r.body.deviceKey),
    );
    const early = await appendReceived(gateway.store, 'kinds', 1);
    await configure('kinds', receiver.url, ['session.state', 'message.received']);
    const session = {
      deviceId: 'kinds',
      state: 'online' as const,
      previousState: 'connecting' as const,
      phone: '4915100000001',
      reason: 'scanned',
    };
    await appendSessionState(gateway.store, session);
    await appendStatus(gateway.store, {
      deviceId: 'kinds',
      waMessageId: 'OUT-1',
      status: 'delivered',
      recipient: '4915100000002',
      timestamp: 1_700_000_100,
    });
    const late = await appendReceived(gateway.store, 'kinds', 1, 2);
    await receiver.waitUntil(() => receiver.of('kinds').length >= 2);

    // The status change was not asked for and the first message came before the hook: FIFO puts them first if sent.
    const [first, second] = receiver.of('kinds');
    expect(receiver.of('kinds')).toHaveLength(2);
    expect(first.envelope).toMatchObject({ event: 'session.state', deviceId: 'kinds', data: session });
    expect(second.envelope).toMatchObject({
      id: late.ids[0],
      event: 'message.received',
      deviceId: 'kinds',
      data: { from: '4915112345678', type: 'text', body: 'message 2', waMessageId: 'WA-kinds-2' },
    });
    expect(second.envelope.id).not.toBe(early.ids[0]);
    for (const request of [first, second]) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      expect(Object.keys(request.envelope)).toEqual(['id', 'event', 'deviceId', 'timestamp', 'data']);
      expect(new Date(request.envelope.timestamp).toISOString()).toBe(request.envelope.timestamp);
      expect(request.headers['webhook-id']).toBe(request.envelope.id);
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(String(request.headers['webhook-signature'])).toMatch(/^v1,/);
      expect(
        new Webhook(secrets.get('kinds')!).verify(request.body, request.headers as Record<string, string>),
      ).toEqual(request.envelope);
      expect(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(
          request.body,
          request.headers as Record<string, string>,
        ),
      ).toThrow();
    }

    await configure('kinds', receiver.url, ['message.status']);
    await appendStatus(gateway.store, {
      deviceId: 'kinds',
      waMessageId: 'OUT-1',
      status: 'read',
      recipient: '4915100000002',
      timestamp: 1_700_000_200,
    });
    await receiver.waitUntil(() => receiver.of('kinds').length >= 3);
    expect(receiver.of('kinds')[2].envelope).toMatchObject({
      event: 'message.status',
      data: { waMessageId: 'OUT-1', status: 'read', recipient: '4915100000002' },
    });
  });

  it('retries a 500 with the same webhook-id until it is delivered', async () => {
    const failing = await TestReceiver.start();
    failing.respond = (r) => ({ status: r.attemptOfId <= 2 ? 500 : 200 });
    await device('retry-500', failing.url);
    const { ids } = await appendReceived(gateway.store, 'retry-500', 1);
    await failing.waitUntil(() => failing.requests.length === 3);
    expect(failing.requests.map((r) => r.headers['webhook-id'])).toEqual([ids[0], ids[0], ids[0]]);
    expect(failing.requests.map((r) => r.body)).toEqual([
      failing.requests[0].body,
      failing.requests[0].body,
      failing.requests[0].body,
    ]);
    const record = await eventually(async () => {
      const d = await delivery('retry-500', ids[0]);
      return d?.status === 'delivered' && d;
    });
    expect(record).toMatchObject({
      id: ids[0],
      event: 'message.received',
      status: 'delivered',
      attempts: 3,
      lastStatus: 200,
    });
    expect(record).not.toHaveProperty('nextAttemptAt');
    await failing.close();
  });

  it('takes a redirect as a failed attempt and does not follow it', async () => {
    const moved = await TestReceiver.start();
    const elsewhere = await TestReceiver.start();
    moved.respond = (r) =>
      r.attemptOfId === 1 ? { status: 307, headers: { location: elsewhere.url } } : { status: 200 };
    await device('redirect', moved.url);
    const { ids } = await appendReceived(gateway.store, 'redirect', 1);
    const record = await eventually(async () => {
      const d = await delivery('redirect', ids[0]);
      return d?.status === 'delivered' && d;
    });
    expect(record).toMatchObject({ attempts: 2, lastStatus: 200 });
    expect(moved.requests).toHaveLength(2);
    expect(elsewhere.requests).toHaveLength(0);
    await moved.close();
    await elsewhere.close();
  });

  it('retries after a timeout', async () => {
    const slow = await TestReceiver.start();
    slow.respond = (r) => ({
      status: 200,
      // The first is never answered: the sender gives up after WEBHOOK_TIMEOUT_MS.
      after: r.attemptOfId === 1 ? new Promise<void>(() => undefined) : undefined,
    });
    await device('retry-timeout', slow.url);
    const { ids } = await appendReceived(gateway.store, 'retry-timeout', 1);
    const record = await eventually(async () => {
      const d = await delivery('retry-timeout', ids[0]);
      return d?.status === 'delivered' && d;
    });
    expect(record).toMatchObject({ status: 'delivered', attempts: 2, lastStatus: 200 });
    expect(slow.requests.map((r) => r.headers['webhook-id'])).toEqual([ids[0], ids[0]]);
    await slow.close();
  });

  it('retries a refused connection until the receiver is up', async () => {
    const port = await freePort();
    await device('retry-refused', `http://127.0.0.1:${port}/hooks`);
    const { ids } = await appendReceived(gateway.store, 'retry-refused', 1);
    const failed = await eventually(async () => {
      const d = await delivery('retry-refused', ids[0]);
      return d?.attempts >= 1 && d;
    });
    expect(failed).toMatchObject({ status: 'pending', lastError: 'unreachable' });
    expect(failed).not.toHaveProperty('lastStatus');
    expect(Date.parse(failed.nextAttemptAt) - Date.parse(failed.lastAttemptAt)).toBe(RETRY_DELAY_MS);
    const late = await TestReceiver.start(port);
    await late.waitUntil(() => late.requests.length === 1);
    expect(late.requests[0].headers['webhook-id']).toBe(ids[0]);
    await late.close();
  });

  it('honours Retry-After instead of its own schedule', async () => {
    const busy = await TestReceiver.start();
    busy.respond = (r) => (r.attemptOfId === 1 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 });
    await device('retry-after', busy.url);
    const { ids } = await appendReceived(gateway.store, 'retry-after', 1);
    const waiting = await eventually(async () => {
      const d = await delivery('retry-after', ids[0]);
      return d?.attempts === 1 && d;
    });
    expect(waiting).toMatchObject({ status: 'pending', lastStatus: 503, lastError: 'answered 503' });
    expect(Date.parse(waiting.nextAttemptAt) - Date.parse(waiting.lastAttemptAt)).toBe(2_000);
    const started = Date.now();
    await busy.waitUntil(() => busy.requests.length === 2);
    expect(Date.now() - started).toBeGreaterThan(1_000); // not the 300 ms of the schedule
    await busy.close();
  });

  it('ends retries of a delivery on 410 Gone and goes on with the next', async () => {
    const gone = await TestReceiver.start();
    gone.respond = (r) => ({ status: r.envelope.data.waMessageId === 'WA-gone-1' ? 410 : 200 });
    await device('gone', gone.url);
    const { ids } = await appendReceived(gateway.store, 'gone', 2);
    await gone.waitUntil(() => gone.requests.length === 2);
    expect(gone.requests.map((r) => r.headers['webhook-id'])).toEqual(ids);
    expect(await delivery('gone', ids[0])).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 410 });
    // The receiver answered; the attempt's record follows.
    expect(
      await eventually(
        async () => (await delivery('gone', ids[1]))?.status === 'delivered' && delivery('gone', ids[1]),
      ),
    ).toMatchObject({
      status: 'delivered',
      attempts: 1,
    });
    await gone.close();
  });

  it('keeps each device in order under concurrent events and retries', async () => {
    const flaky = await TestReceiver.start();
    // Every 7th event of each device fails its first attempt.
    flaky.respond = (r) => ({
      status: Number(r.envelope.data.waMessageId.split('-').at(-1)) % 7 === 0 && r.attemptOfId === 1 ? 500 : 200,
    });
    const devices = ['order-a', 'order-b', 'order-c'];
    for (const id of devices) await device(id, flaky.url);
    const appended = await Promise.all(devices.map((id) => appendReceived(gateway.store, id, 30)));
    await flaky.waitUntil(() => devices.every((id) => flaky.of(id).length >= 30 + 4), 20_000);
    devices.forEach((id, i) => {
      const requests = flaky.of(id);
      // Delivered (first 200) in the order the events happened; a retry comes before anything newer.
      const positions = requests.map((r) => appended[i].ids.indexOf(r.envelope.id));
      expect(positions.every((p, k) => k === 0 || p >= positions[k - 1])).toBe(true);
      expect([...new Set(positions)]).toEqual(Array.from({ length: 30 }, (_, n) => n));
    });
    await flaky.close();
  });

  it('a slow receiver delays only its own device', async () => {
    const slow = await TestReceiver.start();
    const fast = await TestReceiver.start();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    slow.respond = () => ({ status: 200, after: held });
    await device('slow', slow.url);
    await device('fast', fast.url);
    await appendReceived(gateway.store, 'slow', 3);
    await slow.waitUntil(() => slow.requests.length >= 1, 15_000, 'the first slow');
    await appendReceived(gateway.store, 'fast', 20);
    await fast.waitUntil(() => fast.requests.length === 20, 15_000, 'the fast device');
    // All of fast's events went through while slow's first is still unanswered (on a busy machine its attempt
    // may time out and go again: still the first event, never the next one of its device).
    expect(new Set(slow.requests.map((r) => r.envelope.id)).size).toBe(1);
    release();
    await slow.waitUntil(() => new Set(slow.requests.map((r) => r.envelope.id)).size === 3, 15_000, 'the slow device');
    await slow.close();
    await fast.close();
  });

  it('keeps a log of deliveries, filtered and paged, and delivers a record again on request', async () => {
    const down = await TestReceiver.start();
    down.respond = () => ({ status: 500 });
    await device('log', down.url);
    const {
      ids: [failedId],
    } = await appendReceived(gateway.store, 'log', 1);
    const failed = await eventually(async () => {
      const d = await delivery('log', failedId);
      return d?.status === 'failed' && d;
    });
    expect(failed).toMatchObject({
      event: 'message.received',
      attempts: 4,
      lastStatus: 500,
      lastError: 'answered 500',
    });
    expect(failed).not.toHaveProperty('nextAttemptAt');
    expect(Date.parse(failed.createdAt)).not.toBeNaN();
    expect(down.requests).toHaveLength(4);

    down.respond = () => ({ status: 200 });
    const {
      ids: [okId],
    } = await appendReceived(gateway.store, 'log', 1, 2);
    await eventually(async () => (await delivery('log', okId))?.status === 'delivered');

    expect((await deliveries('log', '?status=failed')).items.map((d: { id: string }) => d.id)).toEqual([failedId]);
    expect((await deliveries('log', '?status=delivered')).items.map((d: { id: string }) => d.id)).toEqual([okId]);
    expect((await deliveries('log', '?status=pending')).items).toEqual([]);
    const page1 = await deliveries('log', '?limit=1');
    expect(page1.items.map((d: { id: string }) => d.id)).toEqual([okId]);
    const page2 = await deliveries('log', `?limit=1&cursor=${page1.nextCursor}`);
    expect(page2.items.map((d: { id: string }) => d.id)).toEqual([failedId]);
    expect(page2.nextCursor).toBeNull();

    const retried = await api('POST', `/devices/log/hooks/deliveries/${failedId}/retry`, {
      deviceKey: keys.get('log'),
    });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: failedId, status: 'pending', attempts: 4 });
    const redelivered = await eventually(async () => {
      const d = await delivery('log', failedId);
      return d?.status === 'delivered' && d;
    });
    expect(redelivered).toMatchObject({ attempts: 5, lastStatus: 200 });
    expect(down.requests.filter((r) => r.envelope.id === failedId)).toHaveLength(5);

    expect(
      (
        await api('POST', `/devices/log/hooks/deliveries/00000000-0000-4000-8000-000000000000/retry`, {
          deviceKey: keys.get('log'),
        })
      ).status,
    ).toBe(404);
    const badId = await api('POST', '/devices/log/hooks/deliveries/nope/retry', { deviceKey: keys.get('log') });
    expect(badId.status).toBe(400);
    expect((await api('GET', '/devices/log/hooks/deliveries?status=lost', { deviceKey: keys.get('log') })).status).toBe(
      400,
    );
    expect((await api('GET', '/devices/log/hooks/deliveries?cursor=abc', { deviceKey: keys.get('log') })).status).toBe(
      400,
    );
    await down.close();
  });

  it('a retry requested for a failed delivery gets one attempt, then fails again', async () => {
    const down = await TestReceiver.start();
    down.respond = () => ({ status: 500 });
    await device('one-more', down.url);
    const {
      ids: [id],
    } = await appendReceived(gateway.store, 'one-more', 1);
    await eventually(async () => (await delivery('one-more', id))?.status === 'failed');
    await api('POST', `/devices/one-more/hooks/deliveries/${id}/retry`, { deviceKey: keys.get('one-more') });
    const again = await eventually(async () => {
      const d = await delivery('one-more', id);
      return d?.status === 'failed' && d.attempts === 5 && d;
    });
    expect(again).toMatchObject({ lastStatus: 500 });
    expect(down.requests).toHaveLength(5);
    await down.close();
  });

  /** A device hooked to a receiver that answers `status`, its first answer held until released; one message, its first attempt under way. */
  async function firstAttemptHeld(deviceId: string, status: number) {
    const receiver = await TestReceiver.start();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.respond = (request) => ({ status, ...(request.attemptOfId === 1 ? { after: held } : {}) });
    await device(deviceId, receiver.url);
    const {
      ids: [id],
    } = await appendReceived(gateway.store, deviceId, 1);
    await receiver.waitUntil(() => receiver.requests.length === 1, 15_000, 'the first attempt');
    return { receiver, release, id };
  }

  it('a retry requested while an attempt is under way goes once that attempt has ended', async () => {
    const { receiver, release, id } = await firstAttemptHeld('retry-in-flight', 200);
    expect(
      (
        await api('POST', `/devices/retry-in-flight/hooks/deliveries/${id}/retry`, {
          deviceKey: keys.get('retry-in-flight'),
        })
      ).status,
    ).toBe(202);
    release();
    // The first attempt ends delivered, but in the round before the retry: the retry still goes.
    await receiver.waitUntil(() => receiver.requests.length === 2, 15_000, 'the requested retry');
    await eventually(async () => (await delivery('retry-in-flight', id))?.status === 'delivered');
    expect((await delivery('retry-in-flight', id))?.attempts).toBe(2);
    expect(new Set(receiver.requests.map((r) => r.envelope.id)).size).toBe(1);
    await receiver.close();
  });

  it('an attempt another process recorded first keeps its backoff: the lane waits for that record, it does not post again at once', async () => {
    const { receiver, release, id } = await firstAttemptHeld('recorded-elsewhere', 500);
    // The device's previous owner recorded this attempt (retry in a minute) and this process has not folded it yet.
    const runner = gateway.webhooks['runner'];
    await runner.stop();
    const now = clock.now();
    await createDeliveryLaneCommands(gateway.store).handle(webhooksStream('recorded-elsewhere'), {
      type: 'RecordAttempt',
      attempt: {
        deviceId: 'recorded-elsewhere',
        deliveryId: id,
        round: 0,
        attempt: 1,
        outcome: 'retrying',
        status: 503,
        durationMs: 5,
        attemptedAt: new Date(now).toISOString(),
        nextAttemptAt: new Date(now + 60_000).toISOString(),
      },
    });
    release();
    // Its own outcome finds attempt 1 recorded: the lane waits for the read model to include that record.
    const waiting = runner as unknown as { waiters: unknown[] };
    await eventually(() => waiting.waiters.length > 0, 'the lane to wait for the read model');
    expect(receiver.requests).toHaveLength(1);
    await runner.start();
    const record = await eventually(async () => {
      const d = await delivery('recorded-elsewhere', id);
      return d?.attempts === 1 && d;
    });
    expect(record).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 503 });
    expect(Date.parse(record.nextAttemptAt)).toBe(now + 60_000);
    // The lane's next try is set for that record's time, not sooner, and goes once the clock gets there.
    await eventually(
      () => clock.pending().some((at) => at >= now + 60_000 && at < now + 61_000),
      "the lane's timer for the recorded backoff",
    );
    await clock.advance(now + 58_000 - clock.now());
    expect(receiver.requests).toHaveLength(1);
    // That try is answered 200: a 500 would start the 300 ms retries, which a loaded machine can run before the wait.
    receiver.respond = () => ({ status: 200 });
    await clock.advance(3_000);
    await receiver.waitUntil(() => receiver.requests.length === 2, 15_000, 'the try after the backoff');
    await eventually(async () => (await delivery('recorded-elsewhere', id))?.status === 'delivered');
    expect(receiver.requests).toHaveLength(2);
    expect(
      (await api('DELETE', '/devices/recorded-elsewhere/hooks', { deviceKey: keys.get('recorded-elsewhere') })).status,
    ).toBe(204);
    await receiver.close();
  });

  it('deliveries read ahead are not sent once the hook was removed and configured again', async () => {
    const receiver = await TestReceiver.start();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.respond = (request) => ({
      status: 200,
      ...(request.attemptOfId === 1 && request.envelope.data.body === 'message 1' ? { after: held } : {}),
    });
    await device('reconfigured', receiver.url);
    // One append: the lane reads all three ahead while the first is under way.
    const events = [1, 2, 3].map((n) => messageReceived('reconfigured', n));
    await gateway.store.append(inboxStream('reconfigured'), events);
    await receiver.waitUntil(() => receiver.requests.length === 1, 15_000, 'the first attempt');
    expect((await api('DELETE', '/devices/reconfigured/hooks', { deviceKey: keys.get('reconfigured') })).status).toBe(
      204,
    );
    await configure('reconfigured', receiver.url, ['message.received']);
    release();
    const {
      ids: [later],
    } = await appendReceived(gateway.store, 'reconfigured', 1, 4);
    await eventually(async () => (await delivery('reconfigured', later))?.status === 'delivered');
    expect(receiver.requests.map((r) => r.envelope.data.body)).toEqual(['message 1', 'message 4']);
    const ended = await Promise.all(events.slice(1).map((e) => delivery('reconfigured', e.id!)));
    expect(ended.map((d) => [d.status, d.attempts])).toEqual([
      ['failed', 0],
      ['failed', 0],
    ]);
    await receiver.close();
  });

  it('removing the hook ends what was pending', async () => {
    const port = await freePort();
    await device('removed', `http://127.0.0.1:${port}/hooks`);
    const { ids } = await appendReceived(gateway.store, 'removed', 2);
    await eventually(async () => (await delivery('removed', ids[0]))?.attempts >= 1);
    expect((await api('DELETE', '/devices/removed/hooks', { deviceKey: keys.get('removed') })).status).toBe(204);
    const items = (await deliveries('removed')).items;
    expect(items.map((d: { status: string }) => d.status)).toEqual(['failed', 'failed']);
    expect(items[0].lastError).toBe('the hook configuration was removed');
  });

  it('rebuilds the same delivery log from the event store alone', async () => {
    const db = new Database(':memory:');
    const model = new WebhooksReadModel(db);
    const runner = new ProjectionRunner(gateway.store, db, [model], pino({ level: 'silent' }));
    await runner.start();
    await runner.stop();
    for (const id of ['kinds', 'retry-500', 'gone', 'log', 'removed', 'order-a']) {
      const rebuilt = model.list(id, { limit: 500 });
      expect(rebuilt.items.length).toBeGreaterThan(0);
      expect({ items: rebuilt.items, nextCursor: null }).toEqual(await deliveries(id, '?limit=500'));
    }
    expect(model.hook('kinds')).toEqual(
      (await api('GET', '/devices/kinds/hooks', { deviceKey: keys.get('kinds') })).body,
    );
    // Retention: finished records go, pending ones stay.
    const pendingBefore = model.devicesWithPending();
    expect(model.prune(Date.now() + 1)).toBeGreaterThan(0);
    expect(model.list('log', { limit: 500 }).items).toEqual([]);
    expect(model.devicesWithPending()).toEqual(pendingBefore);
    db.close();
  });
});
