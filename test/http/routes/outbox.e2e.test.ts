/**
 * The outbox over HTTP with sandbox devices (the sandbox is the network): list, remove, clear, cancel,
 * drain on open, revoke, failures, the rate cap, idempotency across a restart, deleted devices.
 */
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { outboxStream } from '../../../src/messages/message-events.js';
import { sessionStream } from '../../../src/sessions/session-events.js';
import { type Api, startTestGateway } from '../../support/gateway.js';
import { tempDir } from '../../support/temp-dir.js';
import {
  type SandboxDevice,
  createDevice,
  goOffline,
  goOnline,
  outboxList,
  received,
  send,
  statuses,
} from '../../outbox/support/sandbox-devices.js';
import { watchRateLimiter } from '../../outbox/support/harness.js';
import { eventually } from '../../support/eventually.js';
import { TestClock } from '../../support/test-clock.js';

const FAST = {
  DEFAULT_ENGINE: 'sandbox',
  OUTBOX_SPACING: '0ms',
  SANDBOX_DELIVERED_DELAY_MS: '20',
  SANDBOX_READ_DELAY_MS: '20',
};

describe('the outbox over HTTP', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>> | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  const start = async (overrides: Record<string, string> = {}, clock?: TestClock) => {
    gateway = await startTestGateway({ ...FAST, ...overrides }, clock ? { clock } : {});
    return gateway.api;
  };
  /** Where in the log a device's send tries and its session going online are. */
  const triesAndOnlines = async (deviceId: string) => ({
    tries: (await gateway!.store.readStream(outboxStream(deviceId)))
      .filter((e) => e.type === 'OutboxMessageSending')
      .map((e) => ({ position: e.position, waMessageId: (e.data as { waMessageId: string }).waMessageId })),
    onlines: (await gateway!.store.readStream(sessionStream(deviceId)))
      .filter((e) => (e.data as { state: string }).state === 'online')
      .map((e) => e.position),
  });

  it('lists the queue in order with pages, removes one, clears, and cancels by waMessageId', async () => {
    const api = await start();
    const shop = await createDevice(api, 'shop', '4915100000011');
    const sent: Array<{ outboxId: string; waMessageId: string }> = [];
    for (let i = 0; i < 7; i++) sent.push(await send(api, shop, '4915112345678', `m${i}`));
    const seen: string[] = [];
    const texts: string[] = [];
    let cursor: string | null = null;
    do {
      const page: {
        status: number;
        body: {
          items: Array<{ outboxId: string; status: string; attempts: number; kind: string; to: string; text: string }>;
          nextCursor: string | null;
        };
      } = await api('GET', `/devices/shop/outbox?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        deviceKey: shop.key,
      });
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(3);
      for (const item of page.body.items)
        expect(item).toMatchObject({ status: 'queued', attempts: 0, kind: 'text', to: '4915112345678' });
      texts.push(...page.body.items.map((i) => i.text));
      seen.push(...page.body.items.map((i) => i.outboxId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(sent.map((s) => s.outboxId));
    expect(texts).toEqual(sent.map((_, i) => `m${i}`));

    expect((await api('DELETE', `/devices/shop/outbox/${sent[1].outboxId}`, { deviceKey: shop.key })).body).toEqual({
      removed: 1,
    });
    expect((await api('DELETE', `/devices/shop/outbox/${sent[1].outboxId}`, { deviceKey: shop.key })).status).toBe(404);
    expect(
      (await api('DELETE', '/devices/shop/outbox/00000000-0000-4000-8000-000000000000', { deviceKey: shop.key }))
        .status,
    ).toBe(404);
    const cancelled = await api('DELETE', `/devices/shop/send/${sent[2].waMessageId}`, { deviceKey: shop.key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ status: 'cancelled' });
    // Cancelling again says the same; an id never sent is unknown.
    expect((await api('DELETE', `/devices/shop/send/${sent[2].waMessageId}`, { deviceKey: shop.key })).body).toEqual({
      status: 'cancelled',
    });
    expect((await api('DELETE', '/devices/shop/send/3EB0FFFFFFFFFFFFFFFFFF', { deviceKey: shop.key })).status).toBe(
      404,
    );
    expect((await outboxList(api, shop)).map((i) => i.outboxId)).toEqual([0, 3, 4, 5, 6].map((i) => sent[i].outboxId));

    const cleared = await api('DELETE', '/devices/shop/outbox', { deviceKey: shop.key });
    expect(cleared.body).toEqual({ removed: 5 });
    // The file shows the outcome before its flush; the outbox read model takes it after.
    await eventually(async () => (await outboxList(api, shop)).length === 0, 'the outbox read model caught up');
    // Every removal is a `cancelled` status with the outboxId, for the webhooks.
    const recorded = await statuses(gateway!.store, 'shop');
    expect(recorded).toHaveLength(7);
    expect(recorded.every((s) => s.status === 'cancelled' && typeof s.outboxId === 'string')).toBe(true);
    expect(new Set(recorded.map((s) => s.waMessageId))).toEqual(new Set(sent.map((s) => s.waMessageId)));
  });

  it("shows each item's text, its first 200 characters, never half a character", async () => {
    const api = await start();
    const shop = await createDevice(api, 'shop', '4915100000011');
    const long = `${'a'.repeat(199)}😀${'b'.repeat(50)}`;
    await send(api, shop, '4915112345678', long);
    await send(api, shop, '4915112345678', 'short');
    const items = (await api('GET', '/devices/shop/outbox', { deviceKey: shop.key })).body.items as Array<{
      text: string;
    }>;
    expect(items.map((item) => item.text)).toEqual(['a'.repeat(199), 'short']);
  });

  it('sends what was queued while closed once the session is online, and again after a close and reopen', async () => {
    const api = await start();
    const shop = await createDevice(api, 'shop', '4915100000011');
    const customer = await createDevice(api, 'customer', '4915100000022');
    await goOnline(api, customer);
    const before = [
      await send(api, shop, customer.phone, 'one'),
      await send(api, shop, customer.phone, 'two'),
      await send(api, shop, customer.phone, 'three'),
    ];
    expect(await outboxList(api, shop)).toHaveLength(3);
    await goOnline(api, shop);
    await eventually(async () => (await outboxList(api, shop)).length === 0, 'the outbox drained');
    // The recipient (another sandbox device) got them, in order, with the ids assigned when queued.
    const got = await eventually(async () => {
      const messages = await received(gateway!.store, 'customer');
      return messages.length === 3 ? messages : undefined;
    }, 'three messages at the customer');
    expect(got.map((m) => [m.waMessageId, m.body, m.from])).toEqual(
      before.map((s, i) => [s.waMessageId, ['one', 'two', 'three'][i], shop.phone]),
    );
    const sentStatuses = (await statuses(gateway!.store, 'shop')).filter((s) => s.status === 'sent');
    expect(sentStatuses.map((s) => s.outboxId)).toEqual(before.map((s) => s.outboxId));
    // Nothing was tried while the session was closed: every try comes after the session went online.
    const first = await triesAndOnlines('shop');
    expect(first.onlines).toHaveLength(1);
    expect(first.tries.map((t) => t.waMessageId)).toEqual(before.map((s) => s.waMessageId));
    expect(first.tries.filter((t) => t.position < first.onlines[0])).toEqual([]);
    // Receipts follow.
    await eventually(
      async () => (await statuses(gateway!.store, 'shop')).filter((s) => s.status === 'read').length === 3,
      'read receipts',
    );
    // Receipts name the outbox item too (the message.status webhooks carry it).
    const receipts = (await statuses(gateway!.store, 'shop')).filter(
      (s) => s.status === 'delivered' || s.status === 'read',
    );
    expect(receipts.map((s) => s.outboxId).sort()).toEqual([...before, ...before].map((s) => s.outboxId).sort());

    await goOffline(api, shop);
    const whileClosed = await send(api, shop, customer.phone, 'four');
    expect((await outboxList(api, shop)).map((i) => i.outboxId)).toEqual([whileClosed.outboxId]);
    await goOnline(api, shop); // credentials kept: no scan
    await eventually(
      async () => (await received(gateway!.store, 'customer')).some((m) => m.waMessageId === whileClosed.waMessageId),
      'the fourth message',
    );
    const second = await triesAndOnlines('shop');
    expect(second.onlines).toHaveLength(2);
    expect(
      second.tries.filter((t) => t.waMessageId === whileClosed.waMessageId).map((t) => t.position > second.onlines[1]),
    ).toEqual([true]);
  });

  it('fails a message to a number that does not exist (recipient_not_found) and goes on with the next', async () => {
    const api = await start();
    const shop = await createDevice(api, 'shop', '4915100000011');
    await goOnline(api, shop);
    const nobody = await send(api, shop, '4915100000000', 'hello?');
    const somebody = await send(api, shop, '4915112345678', 'hello!');
    await eventually(
      async () =>
        (await statuses(gateway!.store, 'shop')).filter((s) => s.status === 'sent' || s.status === 'failed').length ===
        2,
      'two outcomes',
    );
    const recorded = await statuses(gateway!.store, 'shop');
    expect(recorded.find((s) => s.waMessageId === nobody.waMessageId)).toMatchObject({
      status: 'failed',
      outboxId: nobody.outboxId,
      error: { code: 'recipient_not_found' },
    });
    expect(recorded.find((s) => s.waMessageId === somebody.waMessageId)).toMatchObject({ status: 'sent' });
    // The file shows the outcome before its flush; the outbox read model takes it after.
    await eventually(async () => (await outboxList(api, shop)).length === 0, 'the outbox read model caught up');
    // A failed message cannot be deleted; it was never sent.
    expect((await api('DELETE', `/devices/shop/send/${nobody.waMessageId}`, { deviceKey: shop.key })).body.code).toBe(
      'message_failed',
    );
  });

  it('revokes a sent message on DELETE /send (202 deleting, later deleted)', async () => {
    const api = await start();
    const shop = await createDevice(api, 'shop', '4915100000011');
    await goOnline(api, shop);
    const message = await send(api, shop, '4915112345678', 'oops');
    await eventually(async () => (await statuses(gateway!.store, 'shop')).some((s) => s.status === 'sent'), 'sent');
    const answer = await api('DELETE', `/devices/shop/send/${message.waMessageId}`, { deviceKey: shop.key });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ status: 'deleting' });
    await eventually(
      async () => (await statuses(gateway!.store, 'shop')).some((s) => s.status === 'deleted'),
      'deleted',
    );
    const deleted = (await statuses(gateway!.store, 'shop')).find((s) => s.status === 'deleted')!;
    expect(deleted).toMatchObject({ waMessageId: message.waMessageId, outboxId: message.outboxId });
    // The drainer recorded it; the answer follows once the outbox read model has it (no request of ours waited for it).
    await eventually(
      async () =>
        (await api('DELETE', `/devices/shop/send/${message.waMessageId}`, { deviceKey: shop.key })).body.status ===
        'deleted',
      'answered deleted',
    );
  });

  it('holds the rate cap: with 3 a minute, 3 of 6 go and the others wait', async () => {
    const clock = new TestClock({ running: true });
    const api = await start({ OUTBOX_RATE_PER_MINUTE: '3' }, clock);
    const shop = await createDevice(api, 'shop', '4915100000011');
    const queued: Array<{ outboxId: string; waMessageId: string }> = [];
    for (let i = 0; i < 6; i++) queued.push(await send(api, shop, '4915112345678', `m${i}`));
    const limiter = watchRateLimiter();
    onTestFinished(() => limiter.restore());
    await goOnline(api, shop);
    await eventually(
      async () => (await statuses(gateway!.store, 'shop')).filter((s) => s.status === 'sent').length === 3,
      'three sent',
    );
    // The fourth try waits: the stream holds three tries started within the minute, and the cap counts the
    // stream's tries (whichever process made them); the lane's own limiter started no more either.
    const starts = (await gateway!.store.readStream('outbox-shop'))
      .filter((e) => e.type === 'OutboxMessageSending')
      .map((e) => (e.data as { startedAt: number }).startedAt);
    expect(starts).toHaveLength(3);
    const windowEnds = Math.min(...starts) + 60_000;
    expect(windowEnds).toBeGreaterThan(clock.now());
    // The lane sleeps until the first of the three is a minute old.
    await eventually(
      () => clock.pending().some((at) => Math.abs(at - windowEnds) <= 50),
      'the lane to wait for the end of the minute',
    );
    expect(limiter.started()).toBe(3);
    const sent = (await statuses(gateway!.store, 'shop')).filter((s) => s.status === 'sent');
    expect(sent.map((s) => s.waMessageId)).toEqual(queued.slice(0, 3).map((q) => q.waMessageId));
    expect((await outboxList(api, shop)).map((i) => i.outboxId)).toEqual(queued.slice(3).map((q) => q.outboxId));
  });

  it('answers an Idempotency-Key with the first answer after a restart too', async () => {
    const dataDir = tempDir('dmg-idem-');
    let api: Api = await start({ DATA_DIR: dataDir });
    const shop = await createDevice(api, 'shop', '4915100000011');
    const first = await send(api, shop, '4915112345678', 'once', { 'idempotency-key': 'abc-123' });
    await gateway!.close();
    api = await start({ DATA_DIR: dataDir });
    const again = await api('POST', '/devices/shop/send/text', {
      deviceKey: shop.key,
      json: { to: '4915112345678', text: 'once' },
      headers: { 'idempotency-key': 'abc-123' },
    });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ ...first, status: 'queued', kind: 'text', to: '4915112345678' });
    expect(await outboxList(api, shop)).toHaveLength(1);
  });

  it('takes the same request with its JSON fields in another order as the same request for its Idempotency-Key', async () => {
    const api = await start();
    const shop = await createDevice(api, 'shop', '4915100000011');
    const sendLocation = (raw: string) =>
      api('POST', '/devices/shop/send/location', {
        deviceKey: shop.key,
        raw,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'here-1' },
      });
    const first = await sendLocation('{"latitude":52.52,"longitude":13.405,"to":"4915112345678","name":"Office"}');
    expect(first.status).toBe(202);
    const again = await sendLocation('{"to":"4915112345678","name":"Office","longitude":13.405,"latitude":52.52}');
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body.outboxId).toBe(first.body.outboxId);
    const other = await sendLocation('{"to":"4915112345678","name":"Home","longitude":13.405,"latitude":52.52}');
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    expect(await outboxList(api, shop)).toHaveLength(1);
  });

  it('drops the outbox of a deleted device: what waited is cancelled and its media removed', async () => {
    const api = await start();
    const shop: SandboxDevice = await createDevice(api, 'shop', '4915100000011');
    const message = await send(api, shop, '4915112345678', 'never');
    expect((await api('DELETE', '/devices/shop', { admin: true })).status).toBe(204);
    await eventually(async () => (await statuses(gateway!.store, 'shop')).length === 1, 'the cancellation');
    expect((await statuses(gateway!.store, 'shop'))[0]).toMatchObject({
      waMessageId: message.waMessageId,
      status: 'cancelled',
      error: { code: 'device_deleted' },
    });
  });
});
