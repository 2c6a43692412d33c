/**
 * Catch-up and rebuilds on EventStoreDB download only what the read models read (issue 13, defect 7):
 * the server filters $all, so snapshots (credentials among them) and system events stay on the server.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EventStore } from '../../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { type EsdbTestServer, startEsdbTestServer } from '../../support/esdb-test-server.js';

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

it('reads $all without downloading snapshots or system events', async () => {
  const stream = `visible-${randomUUID()}`;
  const { position: after } = await store.append(stream, [{ type: 'Marker', data: {} }]);
  // A device whose credentials were saved often: hundreds of snapshot events, each a few KiB.
  for (let i = 0; i < 300; i++)
    await store.saveSnapshot(`baileys-auth-x/key-${i % 30}`, { revision: 0, state: { key: 'k'.repeat(2_000), i } });
  await store.append(
    stream,
    [1, 2, 3].map((n) => ({ type: 'Tick', data: { n } })),
  );
  expect(server.allRecords().length).toBeGreaterThan(300);

  const sentBefore = server.allEventsSent;
  const page = await store.readAll({ after, maxCount: 1_000 });
  expect(page.map((e) => e.type)).toEqual(['Tick', 'Tick', 'Tick']);
  // The three, and the marker: a read from a position includes the event there (the port's `after` does not).
  expect(server.allEventsSent - sentBefore).toBe(4);

  // A page of one, as the read models ask for the store's first event: one event crosses the wire.
  const firstBefore = server.allEventsSent;
  expect(await store.readAll({ maxCount: 1 })).toHaveLength(1);
  expect(server.allEventsSent - firstBefore).toBe(1);
});
