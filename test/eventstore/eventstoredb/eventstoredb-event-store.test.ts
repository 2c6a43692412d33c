/**
 * The EventStoreDB / KurrentDB store against the shared conformance suite (invariant 7).
 * Needs a server: `docker compose up -d eventstore`, then
 * `EVENTSTORE_URL='esdb://localhost:2113?tls=false' npx vitest run test/eventstore/eventstoredb/eventstoredb-event-store.test.ts`.
 * Without EVENTSTORE_URL the suite reports as skipped.
 */
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { eventStoreConformance } from '../support/conformance.js';

eventStoreConformance(
  'eventstoredb',
  { open: () => openEventStoreDbStore(process.env.EVENTSTORE_URL!) },
  { skip: !process.env.EVENTSTORE_URL },
);
