/**
 * Writes a large event log straight into the SQLite store's tables, many thousand rows per transaction,
 * without fsync per commit: a benchmark's history in seconds instead of minutes. The rows are exactly
 * those SqliteEventStore.append writes (the store's own schema, one revision per stream, NULL metadata),
 * so every reader sees an ordinary log.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_STORE_FILE } from '../../src/eventstore/open-event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';

export interface LogEvent {
  streamId: string;
  type: string;
  data: unknown;
  /** Epoch ms; now when left out. */
  createdAt?: number;
}

const BATCH = 20_000;

/** Appends the events in order; answers how many were written. */
export async function writeLogDirect(dataDir: string, events: Iterable<LogEvent>): Promise<number> {
  const file = join(dataDir, SQLITE_STORE_FILE);
  // Creates the file with the store's own schema (and its user_version).
  await new SqliteEventStore(file).close();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const revisions = new Map<string, number>();
  const revisionOf = db.prepare<[string], { revision: number }>('SELECT revision FROM streams WHERE stream_id = ?');
  const insert = db.prepare(
    'INSERT INTO events (stream_id, revision, event_id, type, data, metadata, created_at) VALUES (?, ?, ?, ?, ?, NULL, ?)',
  );
  const upsertStream = db.prepare(
    'INSERT INTO streams (stream_id, revision) VALUES (?, ?) ON CONFLICT(stream_id) DO UPDATE SET revision = excluded.revision',
  );
  const writeBatch = db.transaction((batch: LogEvent[]) => {
    const now = Date.now();
    for (const event of batch) {
      let revision = revisions.get(event.streamId);
      if (revision === undefined) revision = revisionOf.get(event.streamId)?.revision ?? -1;
      revision += 1;
      revisions.set(event.streamId, revision);
      insert.run(
        event.streamId,
        revision,
        randomUUID(),
        event.type,
        JSON.stringify(event.data),
        event.createdAt ?? now,
      );
    }
  });
  let written = 0;
  let batch: LogEvent[] = [];
  try {
    for (const event of events) {
      batch.push(event);
      if (batch.length === BATCH) {
        writeBatch(batch);
        written += batch.length;
        batch = [];
      }
    }
    if (batch.length > 0) writeBatch(batch);
    written += batch.length;
    db.transaction(() => {
      for (const [streamId, revision] of revisions) upsertStream.run(streamId, revision);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  return written;
}
