import type Database from 'better-sqlite3';

/**
 * Tables of the embedded event store. `position` is the global order; (stream_id, revision) the stream order.
 * An event id is unique within its stream, as on EventStoreDB, whose idempotency check only matches ids
 * of the stream appended to (KurrentDB, src/KurrentDB.Core/Services/Storage/ReaderIndex/IndexWriter.cs,
 * `CheckCommit`: a committed id of another stream is no repeat); the same id in another stream is another event.
 * The append checks that rule (sqlite-event-store.ts); the index is on event_id alone and not unique: new ids
 * are time-ordered, so every insert lands at the index's end. A UNIQUE (stream_id, event_id) index put one
 * insertion point per stream, and a group commit over 50 streams dirtied 50 pages of it: appends ran at half speed.
 */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position   INTEGER PRIMARY KEY AUTOINCREMENT,
  stream_id  TEXT    NOT NULL,
  revision   INTEGER NOT NULL,
  event_id   TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  data       TEXT    NOT NULL,
  metadata   TEXT,
  created_at INTEGER NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE INDEX IF NOT EXISTS events_by_event_id ON events (event_id);
CREATE TABLE IF NOT EXISTS streams (
  stream_id TEXT PRIMARY KEY,
  revision  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS snapshots (
  stream_id TEXT PRIMARY KEY,
  revision  INTEGER NOT NULL,
  state     TEXT    NOT NULL,
  saved_at  INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** `PRAGMA user_version` of a file with the current tables. */
export const SCHEMA_VERSION = 2;

/**
 * Creates the tables, or brings an older file up to SCHEMA_VERSION in one transaction: version 0 made event
 * ids unique across all streams, version 1 unique per stream by a constraint; a constraint's index cannot be
 * dropped, so their events table is copied, positions kept.
 */
export function setUpSchema(db: Database.Database): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    const hasEvents =
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get() !== undefined;
    if (hasEvents && version < SCHEMA_VERSION && eventIdsConstrained(db)) {
      const sequence = db
        .prepare<[], { seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = 'events'")
        .get()?.seq;
      db.exec('ALTER TABLE events RENAME TO events_old');
      db.exec(SCHEMA);
      db.exec(`INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata, created_at)
               SELECT position, stream_id, revision, event_id, type, data, metadata, created_at FROM events_old ORDER BY position`);
      db.exec('DROP TABLE events_old');
      // AUTOINCREMENT never hands out a position again, even one whose row is gone.
      if (sequence !== undefined)
        db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'").run(sequence);
    } else {
      db.exec(SCHEMA);
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
    // IMMEDIATE: several processes opening one file at once wait for each other instead of failing.
  }).immediate();
}

/** For a reader that must not change the file: one written by another version of the gateway is refused. */
export function assertCurrentSchema(db: Database.Database, file: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version !== SCHEMA_VERSION) {
    throw new Error(
      `${file} has store schema ${version}, this gateway reads ${SCHEMA_VERSION}: start this version of the gateway on it once to bring it up to date`,
    );
  }
}

/** Whether a unique index (of an older version) covers event_id. */
function eventIdsConstrained(db: Database.Database): boolean {
  const indexes = db
    .prepare<[], { name: string; unique: number }>('SELECT name, "unique" FROM pragma_index_list(\'events\')')
    .all();
  return indexes.some((index) => {
    if (!index.unique) return false;
    const columns = db
      .prepare<[string], { name: string }>('SELECT name FROM pragma_index_info(?)')
      .all(index.name)
      .map((c) => c.name);
    return columns.includes('event_id');
  });
}
