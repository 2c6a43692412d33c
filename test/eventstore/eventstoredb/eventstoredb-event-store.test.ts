/**
 * The EventStoreDB / KurrentDB store against the shared conformance suite (docs/architecture.md, invariant 7).
 * By default it runs against the in-process protocol test double (test/support/esdb-test-server.ts), as one
 * node and as a three-node cluster;
 * with EVENTSTORE_URL set (e.g. `docker compose up -d eventstore`, then
 * `EVENTSTORE_URL='esdb://localhost:2113?tls=false' npx vitest run test/eventstore`) against that server.
 */
import { afterAll, beforeAll } from 'vitest';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { EsdbTestServer, startEsdbTestCluster, startEsdbTestServer } from '../../support/esdb-test-server.js';
import { eventStoreConformance } from '../support/conformance.js';

let server: EsdbTestServer | undefined;
let cluster: EsdbTestServer | undefined;
/** KurrentDB 26.0.3, whose AppendRecords checks a fenced write's fence inside the write (append-records.ts). */
let checking: EsdbTestServer | undefined;
let checkingCluster: EsdbTestServer | undefined;
beforeAll(async () => {
  if (process.env.EVENTSTORE_URL) return;
  server = await startEsdbTestServer();
  cluster = await startEsdbTestCluster();
  checking = await new EsdbTestServer({ version: '26.0.3' }).start();
  checkingCluster = await startEsdbTestCluster({ version: '26.0.3' });
});
afterAll(async () => {
  await server?.stop();
  await cluster?.stop();
  await checking?.stop();
  await checkingCluster?.stop();
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

// KurrentDB 26.0.3: fenced writes go through AppendRecords with consistency checks, on one node and through a follower.
if (!process.env.EVENTSTORE_URL) {
  eventStoreConformance('eventstoredb (test server as KurrentDB 26.0.3, fences checked in the write)', {
    open: () => openEventStoreDbStore(checking!.url),
  });
  eventStoreConformance('eventstoredb (3-node test cluster as KurrentDB 26.0.3, through a follower)', {
    open: () => openEventStoreDbStore(checkingCluster!.nodeUrl(1)),
  });
}
