import { join } from 'node:path';
import type { Config } from '../config.js';
import type { EventStore } from './event-store.js';
import { SqliteEventStore } from './sqlite/sqlite-event-store.js';

export const SQLITE_STORE_FILE = 'events.sqlite';

/** EventStoreDB when EVENTSTORE_URL is set, else the embedded SQLite store in DATA_DIR. */
export async function openEventStore(config: Pick<Config, 'eventStoreUrl' | 'dataDir'>): Promise<EventStore> {
  if (config.eventStoreUrl) {
    // Loaded only when used: the gRPC client is heavy and most installations run the embedded store.
    const { openEventStoreDbStore } = await import('./eventstoredb/eventstoredb-event-store.js');
    return openEventStoreDbStore(config.eventStoreUrl);
  }
  return new SqliteEventStore(join(config.dataDir, SQLITE_STORE_FILE));
}
