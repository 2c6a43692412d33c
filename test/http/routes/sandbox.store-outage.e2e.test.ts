/**
 * A sandbox device while the store refuses writes: POST /sandbox/…/inbound answers only once the message
 * is durable, so it answers the store's error (a problem, never a 500) and the message is not recorded
 * later; receipts that come meanwhile are kept and recorded once the store is back.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Gateway, startGateway } from '../../../src/gateway.js';
import { eventually } from '../../support/eventually.js';
import { FailingWritesStore } from '../../support/failing-store.js';
import { type Api, apiClient, testConfig } from '../../support/gateway.js';
import { createDevice, goOnline, received, send, statuses } from '../../outbox/support/sandbox-devices.js';
import { sessionChanges } from '../../support/sessions.js';

describe('sandbox inbound and receipts while the store cannot write', () => {
  let gateway: Gateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('refuses inbound with 507 while the disk is full, keeps the receipts, and records them after recovery', async () => {
    let failing: FailingWritesStore | undefined;
    const config = testConfig({
      SANDBOX_DELIVERED_DELAY_MS: '800',
      SANDBOX_READ_DELAY_MS: '400',
      OUTBOX_SPACING: '0ms',
    });
    gateway = await startGateway(config, {
      logger: pino({ level: 'silent' }),
      validateResponses: true,
      wrapStore: (store) => (failing = new FailingWritesStore(store)),
    });
    const api: Api = apiClient(gateway.url);
    const store = gateway.store;
    const shop = await createDevice(api, 'shop', '4915100000011');
    await goOnline(api, shop);

    const accepted = await api('POST', '/sandbox/devices/shop/inbound', {
      admin: true,
      json: { from: '4915100000099', body: 'before' },
    });
    expect(accepted.status).toBe(202);
    // Durable when answered: no waiting for it.
    expect((await received(store, 'shop')).map((m) => m.body)).toEqual(['before']);

    const { waMessageId } = await send(api, shop, '4915100000022', 'hi');
    await eventually(
      async () => (await statuses(store, 'shop')).some((s) => s.status === 'sent'),
      'the message to be sent',
    );

    failing!.failing = true;
    const refused = await api('POST', '/sandbox/devices/shop/inbound', {
      admin: true,
      json: { from: '4915100000099', body: 'during' },
    });
    // The failing store reports a full disk (SQLITE_FULL): the error table answers 507, which says what to fix.
    expect(refused.status).toBe(507);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body.code).toBe('insufficient_storage');

    // The receipts fall due while failing: held, and the device's intake with them.
    const actor = gateway.sessions.peek('shop')!;
    await eventually(() => actor.heldReports() === 2, 'both receipts held', 10_000);
    expect(gateway.sessions.state('shop')).toBe('reconnecting');
    // Not recorded (nothing can be): the session state says the live state all the same, and that writes fail.
    const state = await api('GET', '/devices/shop/session/state', { deviceKey: shop.key });
    expect(state.body).toMatchObject({ state: 'reconnecting', storageFailing: true });
    // The session is held because of the store: its answer, as for a send, and not 409 session_not_online.
    const closedIntake = await api('POST', '/sandbox/devices/shop/inbound', {
      admin: true,
      json: { from: '4915100000099', body: 'held' },
    });
    expect(closedIntake.status).toBe(507);
    expect(closedIntake.body.code).toBe('insufficient_storage');
    expect(closedIntake.headers.get('retry-after')).toBe('30');

    failing!.failing = false;
    await eventually(() => gateway!.sessions.state('shop') === 'online', 'online again', 15_000);
    await eventually(
      async () => (await statuses(store, 'shop')).filter((s) => s.waMessageId === waMessageId).length === 3,
      'the receipts recorded',
    );
    expect((await statuses(store, 'shop')).filter((s) => s.waMessageId === waMessageId).map((s) => s.status)).toEqual([
      'sent',
      'delivered',
      'read',
    ]);

    const after = await api('POST', '/sandbox/devices/shop/inbound', {
      admin: true,
      json: { from: '4915100000099', body: 'after' },
    });
    expect(after.status).toBe(202);
    // The refused message was never recorded: the sender was told.
    expect((await received(store, 'shop')).map((m) => m.body)).toEqual(['before', 'after']);
    const reasons = (await sessionChanges(store, 'shop')).map((c) => `${c.state}:${c.reason}`);
    expect(reasons.slice(-2)).toEqual(['reconnecting:store_unavailable', 'online:connected']);
  });

  it('answers a history chunk only once recorded: one the store refuses is a problem and never recorded later', async () => {
    let failing: FailingWritesStore | undefined;
    gateway = await startGateway(testConfig({}), {
      logger: pino({ level: 'silent' }),
      validateResponses: true,
      wrapStore: (store) => (failing = new FailingWritesStore(store)),
    });
    const api: Api = apiClient(gateway.url);
    const shop = await createDevice(api, 'shop', '4915100000011');
    await goOnline(api, shop);
    const history = (body: string) =>
      api('POST', '/sandbox/devices/shop/history', {
        admin: true,
        json: { chats: [{ chatId: '4915100000099', messages: [{ body, timestamp: 1_600_000_000 }] }] },
      });
    const imported = async () =>
      (await gateway!.store.readStream('inbox-shop')).filter((e) => e.type === 'HistoryImported').length;

    failing!.refusing = (streamId) => streamId === 'inbox-shop';
    const refused = await history('refused');
    expect(refused.status).toBe(507);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    failing!.refusing = undefined;
    // Recorded when answered: no waiting for it; the refused chunk stays unrecorded.
    expect((await history('taken')).status).toBe(202);
    expect(await imported()).toBe(1);
  });
});
