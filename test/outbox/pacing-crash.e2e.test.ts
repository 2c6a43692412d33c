/**
 * kill -9 while sends wait for their pacing window: a restart on the same data keeps them queued and deferred (the
 * count and the deferral come from the log), loses none, and sends them in order once the window opens.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CHILD_GATEWAY_TESTS, type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { apiClient } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { eventually } from '../support/eventually.js';
import { createDevice, goOnline, outboxList, send } from './support/sandbox-devices.js';

const ENV = { DEFAULT_ENGINE: 'sandbox', OUTBOX_SPACING: '0ms' };
const hhmm = (epoch: number) => new Date(epoch).toISOString().slice(11, 16);

describe('kill -9 with deferred sends', CHILD_GATEWAY_TESTS, () => {
  let gateway: ChildGateway | undefined;
  afterEach(async () => {
    await gateway?.kill().catch(() => undefined);
    gateway = undefined;
  });

  it('loses none: still deferred after the restart, sent in order when the window opens', async () => {
    const dataDir = tempDir('dmg-pacing-crash-');
    gateway = await spawnGateway(dataDir, ENV);
    let api = apiClient(gateway.url);
    const shop = await createDevice(api, 'shop', '4915100000031');
    await goOnline(api, shop);
    // Quiet hours (UTC) around now: every send waits.
    const now = Date.now();
    const quiet = { from: hhmm(now - 3_600_000), to: hhmm(now + 3_600_000) };
    const set = await api('PATCH', '/devices/shop/settings', {
      deviceKey: shop.key,
      json: { pacing: { quietHours: quiet } },
    });
    expect(set.status).toBe(200);
    const sent = [];
    for (let i = 0; i < 5; i += 1) sent.push(await send(api, shop, '4915100000032', `m${i}`));
    await eventually(async () => {
      const items = await outboxList(api, shop);
      return items.length === 5 && items.every((item) => 'deferredUntil' in item) ? true : undefined;
    }, 'all five deferred');
    await gateway.kill();

    gateway = await spawnGateway(dataDir, ENV);
    api = apiClient(gateway.url);
    await eventually(async () => {
      const state = (await api('GET', '/devices/shop/session/state', { deviceKey: shop.key })).body.state;
      return state === 'online' ? true : undefined;
    }, 'online again');
    const kept = await outboxList(api, shop);
    expect(kept.map((item) => item.waMessageId)).toEqual(sent.map((s) => s.waMessageId));
    expect(kept.every((item) => item.status === 'queued' && 'deferredUntil' in item)).toBe(true);
    const pacing = await api('GET', '/devices/shop/pacing', { deviceKey: shop.key });
    expect(pacing.body).toMatchObject({ today: 0, deferred: 5 });

    // The quiet hours end (lifted): all five go, in the order they were queued.
    await api('PATCH', '/devices/shop/settings', { deviceKey: shop.key, json: { pacing: { quietHours: null } } });
    await eventually(async () => ((await outboxList(api, shop)).length === 0 ? true : undefined), 'drained', 30_000);
    const events = (await api('GET', '/devices/shop/events?limit=1000', { admin: true })).body.items as Array<{
      type: string;
      data: { waMessageId?: string; status?: string };
    }>;
    const sentOrder = events
      .filter((e) => e.type === 'MessageStatusChanged' && e.data.status === 'sent')
      .map((e) => e.data.waMessageId);
    expect(sentOrder).toEqual(sent.map((s) => s.waMessageId));
    await gateway.stop();
    gateway = undefined;
  });
});
