/**
 * The EventStoreDB / KurrentDB store against the shared conformance suite (docs/architecture.md, invariant 7).
 * By default it runs against the in-process protocol test double (test/support/esdb-test-server.ts), as one
 * node and as a three-node cluster;
 * with EVENTSTORE_URL set (e.g. `docker compose up -d eventstore`, then
 * `EVENTSTORE_URL='esdb://localhost:2113?tls=false' npx vitest run test/eventstore`) against that server.
 */
import { afterAll, beforeAll } from 'vitest';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { type EsdbTestServer, startEsdbTestCluster, startEsdbTestServer } from '../../support/esdb-test-server.js';
import { eventStoreConformance } from '../support/conformance.js';

let server: EsdbTestServer | undefined;
let cluster: EsdbTestServer | undefined;
beforeAll(async () => {
  if (!process.env.EVENTSTORE_URL) server = await startEsdbTestServer();
  if (!process.env.EVENTSTORE_URL) cluster = await startEsdbTestCluster();
});
afterAll(async () => {
  await server?.stop();
  await cluster?.stop();
});

eventStoreConformance(process.env.EVENTSTORE_URL ? 'eventstoredb (EVENTSTORE_URL)' : 'eventstoredb (test server)', {
  open: () => openEventStoreDbStore(process.env.EVENTSTORE_URL ?? server!.url),
});

// A three-node test cluster, reached through a follower: every call is redirected to the leader first.
if (!process.env.EVENTSTORE_URL) {
  eventStoreConformance('eventstoredb (3-node test cluster, through a follower)', {
    open: () => openEventStoreDbStore(cluster!.nodeUrl(1)),
  });
}
