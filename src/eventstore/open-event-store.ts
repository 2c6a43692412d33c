import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EventStore } from './event-store.js';
import { SqliteEventStore } from './sqlite/sqlite-event-store.js';

export const SQLITE_STORE_FILE = 'events.sqlite';
/**
 * Several processes on the file: how often at most each reads the others' commits (SqliteStoreOptions.tailIntervalMs).
 * The `-wal` watch fires several times per commit, and checking `data_version` at each signal was about 4 % of a
 * worker's time per request (issue 30); 2 ms later is soon enough for what follows the log.
 */
const SHARED_FILE_TAIL_INTERVAL_MS = 2;

/**
 * EventStoreDB when EVENTSTORE_URL is set, else the embedded SQLite store in DATA_DIR.
 * A remote store that is down is waited for up to `startupTimeoutMs` (the gateway: for as long as it takes,
 * logging each try), then StoreUnavailableError.
 */
export async function openEventStore(
  config: Pick<Config, 'eventStoreUrl' | 'dataDir'> &
    Partial<Pick<Config, 'eventStoreLimits'>> & { cluster?: Pick<Config['cluster'], 'leases'> },
  /** `readOnly`: the embedded store is only read, never set up or migrated (SqliteStoreOptions). */
  options: {
    log?: Pick<Logger, 'warn'>;
    startupTimeoutMs?: number;
    readOnly?: boolean;
    tailIntervalMs?: number;
    /** SqliteStoreOptions.checkpointedElsewhere (a GATEWAY_PROCESSES worker: the primary checkpoints the file). */
    checkpointedElsewhere?: boolean;
  } = {},
): Promise<EventStore> {
  if (config.eventStoreUrl) {
    // Loaded only when used: the gRPC client is heavy and most installations run the embedded store.
    const { openEventStoreDbStore } = await import('./eventstoredb/eventstoredb-event-store.js');
    return openEventStoreDbStore(config.eventStoreUrl, {
      startupTimeoutMs: options.startupTimeoutMs ?? 0,
      limits: config.eventStoreLimits,
      onWaiting: (error, attempt) =>
        options.log?.warn(
          { attempt, reason: (error as Error).message },
          'event store unavailable at start; waiting for it',
        ),
    });
  }
  // Several processes on the file: each one's live feed must also see the others' commits.
  return new SqliteEventStore(join(config.dataDir, SQLITE_STORE_FILE), {
    sharedFile: config.cluster?.leases === true,
    readOnly: options.readOnly === true,
    tailIntervalMs: options.tailIntervalMs ?? SHARED_FILE_TAIL_INTERVAL_MS,
    checkpointedElsewhere: options.checkpointedElsewhere === true,
  });
}
