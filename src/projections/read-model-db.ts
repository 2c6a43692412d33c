import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FALLBACK_AUTOCHECKPOINT_PAGES, backgroundCheckpoints } from '../eventstore/sqlite/background-checkpoints.js';

export const READ_MODEL_FILE = 'read-models.sqlite';
const READ_MODEL_MMAP_BYTES = 1024 ** 3;

/**
 * Processes of GATEWAY_CLUSTER started on their own (one machine each, or tests) keep read models of their own;
 * the workers of GATEWAY_PROCESSES serve from the machine projector's READ_MODEL_FILE instead.
 */
export const readModelFileOf = (worker: number) => (worker > 0 ? `read-models.w${worker}.sqlite` : READ_MODEL_FILE);

/**
 * Read models live in their own SQLite file beside the store (whichever store that is): they can be
 * deleted and rebuilt from the log at any time, so NORMAL sync is enough; the checkpoint commits with them.
 */
export function openReadModelDb(
  dataDir: string,
  file = READ_MODEL_FILE,
  /**
   * `follower`: another process (the machine projector) writes the file and checkpoints it; this connection
   * reads, and writes only the odd cache row (contact lookups), never checkpointing on its thread.
   */
  options: { follower?: boolean } = {},
): Database.Database {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, file);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  readSettings(db);
  if (options.follower) {
    db.pragma('wal_autocheckpoint = 0');
    return db;
  }
  // Checkpoints run on a thread of their own (src/eventstore/sqlite/background-checkpoints.ts); this
  // connection checkpoints only if the WAL outgrows the fallback. Its close releases that thread's connection.
  db.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  const checkpoints = backgroundCheckpoints.add(path);
  const close = db.close.bind(db);
  db.close = () => {
    void checkpoints.release();
    return close();
  };
  return db;
}

/** A read-only connection to a read-model file (a reader thread's: src/storage/reader-threads.ts). */
export function openReadModelReader(path: string): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  readSettings(db);
  return db;
}

function readSettings(db: Database.Database): void {
  // 16 MiB: reads go through the memory map below, so the page cache holds mostly the pages written (and those still
  // in the WAL), and whatever size it has fills and counts in the RSS: a history import filled 64 MiB. Random reads cost
  // the same CPU with 16 or 64 (docs/notes/performance.md); a rebuild takes a larger one while it runs.
  db.pragma('cache_size = -16384');
  db.pragma('temp_store = MEMORY');
  // Reads through a memory map: a page of a chat is 51 rows spread over the whole message table, and beyond
  // the page cache each row cost a pread (docs/notes/performance.md). Address space only: the kernel's page
  // cache holds the pages, shared, evictable.
  db.pragma(`mmap_size = ${READ_MODEL_MMAP_BYTES}`);
}
