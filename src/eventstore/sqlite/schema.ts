/** Tables of the embedded event store. `position` is the global order; (stream_id, revision) the stream order. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position   INTEGER PRIMARY KEY AUTOINCREMENT,
  stream_id  TEXT    NOT NULL,
  revision   INTEGER NOT NULL,
  event_id   TEXT    NOT NULL UNIQUE,
  type       TEXT    NOT NULL,
  data       TEXT    NOT NULL,
  metadata   TEXT,
  created_at INTEGER NOT NULL,
  UNIQUE (stream_id, revision)
);
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
