/**
 * How a runner writes a whole log's worth of events into its read models: a rebuild, and a start whose read models
 * begin at position 0 (new, their version changed, or built from another store). Their deferred indexes are dropped
 * and each made once at the end (a sort instead of a million scattered inserts), the page cache is large, SQLite's
 * sorter may use a thread per core, and the WAL is copied back into the file once, at the end. docs/architecture.md,
 * "Batches and rebuilds".
 */
import { availableParallelism } from 'node:os';
import type Database from 'better-sqlite3';
import type { Projection } from './projection.js';

/** Page cache meanwhile (negative: KiB): 256 MiB, given back at the end. Rows land all over the tables' b-trees. */
const BULK_CACHE_SIZE = -262_144;
/**
 * Threads SQLite's sorter may use meanwhile (PRAGMA threads; SQLite allows 8): the deferred indexes and the search
 * index's keys are made by sorting every row at the end, a quarter faster on two cores than on one.
 */
const BULK_SORT_THREADS = Math.min(8, availableParallelism());

/**
 * Sets the connection up for bulk writes to `projections` (each of them just emptied: apply() finds its rows without
 * the deferred indexes, src/projections/row-buffer.ts). Answers what puts it back: the indexes made again (setup()
 * makes any still missing should the process die first), the settings as they were, and the WAL checkpointed.
 */
export function beginBulkWrites(db: Database.Database, projections: readonly Projection[]): () => void {
  // Nothing is served from these tables meanwhile: the WAL is copied back once, not at every 1,000 pages.
  const autocheckpoint = db.pragma('wal_autocheckpoint', { simple: true }) as number;
  db.pragma('wal_autocheckpoint = 0');
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  db.pragma(`cache_size = ${BULK_CACHE_SIZE}`);
  const threads = db.pragma('threads', { simple: true }) as number;
  db.pragma(`threads = ${BULK_SORT_THREADS}`);
  const deferred = dropDeferredIndexes(db, projections);
  return () => {
    db.transaction(() => {
      for (const sql of deferred) db.exec(sql);
    })();
    db.pragma(`cache_size = ${cacheSize}`);
    db.pragma(`threads = ${threads}`);
    db.pragma(`wal_autocheckpoint = ${autocheckpoint}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
  };
}

/** Drops the indexes the read models let bulk writes defer; answers the statements that make them again. */
function dropDeferredIndexes(db: Database.Database, projections: readonly Projection[]): string[] {
  const sqlOf = db.prepare<[string], string>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").pluck();
  const statements: string[] = [];
  for (const name of projections.flatMap((p) => p.deferredIndexes ?? [])) {
    const sql = sqlOf.get(name);
    if (sql === undefined) continue;
    statements.push(sql);
    db.exec(`DROP INDEX ${name}`);
  }
  return statements;
}
