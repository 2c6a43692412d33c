/**
 * Every consumer of a log subscription survives drops (issue 13, defect 2): each is run on the EventStoreDB
 * test double, its subscription is dropped by the server, and what is appended afterwards still reaches it.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { followAll } from '../../src/eventstore/follow-all.js';
import { EventMetrics } from '../../src/metrics/event-metrics.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { DeletedDeviceOutboxes } from '../../src/outbox/commands/deleted-device-outboxes.js';
import type { Outboxes } from '../../src/outbox/stream/outboxes.js';
import { type EsdbTestServer, startEsdbTestServer } from '../support/esdb-test-server.js';
import { eventually } from '../support/eventually.js';

const log = pino({ level: 'silent' });
let server: EsdbTestServer;
let store: EventStore;

beforeAll(async () => {
  server = await startEsdbTestServer();
  store = await openEventStoreDbStore(server.url);
});
afterAll(async () => {
  await store.close();
  await server.stop();
});

const head = async () => (await store.append(`marker-${Date.now()}`, [{ type: 'Marker', data: {} }])).position;

describe('subscription consumers survive drops', () => {
  it('followAll subscribes again after the last event it handled, with no duplicate', async () => {
    const seen: string[] = [];
    const following = followAll(store, {
      after: await head(),
      log,
      name: 'test',
      minDelayMs: 10,
      onBatch: (batch) => {
        for (const e of batch) if (e.streamId === 'drop-follow') seen.push(e.type);
      },
    });
    await store.append('drop-follow', [{ type: 'A', data: {} }]);
    await eventually(() => seen.length === 1);
    await eventually(() => server.dropSubscriptions() > 0, 'a live subscription to drop');
    await store.append('drop-follow', [{ type: 'B', data: {} }]);
    await eventually(() => seen.length === 2, 'the event after the drop');
    await following.stop();
    expect(seen).toEqual(['A', 'B']);
  });

  it('event metrics keep counting after a drop', async () => {
    const metrics = new Metrics();
    const eventMetrics = new EventMetrics(metrics);
    eventMetrics.start(store, await head(), log);
    const count = async () => (await metrics.messagesReceived.get()).values.reduce((sum, v) => sum + v.value, 0);
    await store.append('drop-metrics', [{ type: 'MessageReceived', data: {} }]);
    await eventually(async () => (await count()) === 1);
    await eventually(() => server.dropSubscriptions() > 0, 'a live subscription to drop');
    await store.append('drop-metrics', [{ type: 'MessageReceived', data: {} }]);
    await eventually(async () => (await count()) === 2, 'the count after the drop');
    await eventMetrics.stop();
  });

  it('deleted devices still drop their outbox after a drop', async () => {
    const dropped: string[] = [];
    // Only the subscription is under test here; the outbox's own drop is covered in test/outbox.
    const outboxes = {
      execute: async (deviceId: string) => (dropped.push(deviceId), { result: [] }),
    } as unknown as Outboxes;
    const deletions = new DeletedDeviceOutboxes({ store, outboxes, media: { remove: async () => undefined }, log });
    deletions.start(await head(), [], () => true);
    await store.append('device-d1', [{ type: 'DeviceDeleted', data: { deviceId: 'd1' } }]);
    await eventually(() => dropped.length === 1);
    await eventually(() => server.dropSubscriptions() > 0, 'a live subscription to drop');
    await store.append('device-d2', [{ type: 'DeviceDeleted', data: { deviceId: 'd2' } }]);
    await eventually(() => dropped.length === 2, 'the deletion after the drop');
    await deletions.stop();
    expect(dropped).toEqual(['d1', 'd2']);
  });
});
