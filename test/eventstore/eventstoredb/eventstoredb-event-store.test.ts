/**
 * The EventStoreDB / KurrentDB store against the shared conformance suite (docs/architecture.md, invariant 7).
 * By default it runs against the in-process protocol test double (test/support/esdb-test-server.ts);
 * with EVENTSTORE_URL set (e.g. `docker compose up -d eventstore`, then
 * `EVENTSTORE_URL='esdb://localhost:2113?tls=false' npx vitest run test/eventstore`) against that server.
 */
import { afterAll, beforeAll } from 'vitest';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { type EsdbTestServer, startEsdbTestServer } from '../../support/esdb-test-server.js';
import { eventStoreConformance } from '../support/conformance.js';

let server: EsdbTestServer | undefined;
beforeAll(async () => {
  if (!process.env.EVENTSTORE_URL) server = await startEsdbTestServer();
});
afterAll(async () => {
  await server?.stop();
});

eventStoreConformance(process.env.EVENTSTORE_URL ? 'eventstoredb (EVENTSTORE_URL)' : 'eventstoredb (test server)', {
  open: () => openEventStoreDbStore(process.env.EVENTSTORE_URL ?? server!.url),
});
