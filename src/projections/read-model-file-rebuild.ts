/**
 * `npm run rebuild` of one read-model file: every read model is built again in a fresh file beside it
 * (`<file>.rebuild`), which then takes the old file's place. Nothing reads the fresh file until it is done, so it is
 * written with no WAL (its rollback journal in memory) and no sync until the end, in one transaction (its pages are all
 * new: nothing is journaled, no page written twice), and a rebuild that fails or is killed leaves the old file as it
 * was (docs/operations.md, "History and rebuilds"; docs/notes/performance.md).
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/event-store.js';
import type { Projection } from './projection.js';
import { ProjectionRunner, type RebuildOptions } from './projection-runner.js';

/** What SQLite may keep beside a database file. */
const COMPANIONS = ['-wal', '-shm', '-journal'];

const FRESH_SUFFIX = '.rebuild';

const UNREADABLE = 'the old read-model file cannot be read: its cached lookups are not kept';

/**
 * Rebuilds `file` of `dataDir` from the whole log with the read models `projectionsOf` makes over a database.
 * The database must be this rebuild's alone (npm run rebuild holds the data directory's lock).
 */
export async function rebuildReadModelFile(
  store: EventStore,
  dataDir: string,
  file: string,
  projectionsOf: (db: Database.Database) => Projection[],
  log: Logger,
  /** Events between writes of the rows the read models buffer (tests make it small). */
  options: Pick<RebuildOptions, 'flushEvents'> = {},
): Promise<{ events: number; seconds: number }> {
  const target = join(dataDir, file);
  const fresh = `${target}${FRESH_SUFFIX}`;
  removeWithCompanions(fresh); // a rebuild killed before it finished
  const db = openFresh(fresh);
  let result: { events: number; seconds: number };
  try {
    const runner = new ProjectionRunner(store, db, projectionsOf(db), log);
    result = await runner.rebuild({ ...options, commitEvents: Number.POSITIVE_INFINITY });
    await runner.stop();
    if (existsSync(target)) carryOver(db, target, log);
    // The gateway reads the file in WAL mode (read-model-db.ts); set here, while this connection is its only one.
    db.pragma('journal_mode = WAL');
    db.close();
  } catch (error) {
    if (db.open) db.close();
    removeWithCompanions(fresh);
    throw error;
  }
  syncFile(fresh);
  // The old file's WAL must not outlive it: SQLite would apply it to the file that takes its name.
  for (const suffix of COMPANIONS) rmSync(`${target}${suffix}`, { force: true });
  renameSync(fresh, target);
  syncFile(dirname(target));
  return result;
}

function openFresh(path: string): Database.Database {
  const db = new Database(path);
  // Rollback journal in memory (a failed transaction still rolls back, and there is nothing else to undo), no sync
  // (syncFile at the end), one connection; temporary tables in memory, as the gateway's (the runner sizes the cache).
  db.pragma('journal_mode = MEMORY');
  db.pragma('synchronous = OFF');
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('temp_store = MEMORY');
  return db;
}

/**
 * The tables of the old file that no read model made (contact_lookups: answers cached, not derived from the log)
 * are copied as they are, with their indexes: a rebuild in place leaves them alone too. An old file that cannot be
 * read (a rebuild is how a damaged one is mended) gives nothing: such tables only save asking WhatsApp again.
 */
function carryOver(db: Database.Database, previous: string, log: Logger): void {
  try {
    db.prepare('ATTACH DATABASE ? AS previous').run(previous);
  } catch (error) {
    log.warn({ err: error, file: previous }, UNREADABLE);
    return;
  }
  try {
    const made = new Set(
      db.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main'").pluck().all() as string[],
    );
    // `table`: ordinary tables only (a virtual table's shadow tables are `shadow`).
    const tables = (
      db
        .prepare("SELECT name FROM pragma_table_list WHERE schema = 'previous' AND type = 'table'")
        .pluck()
        .all() as string[]
    ).filter((name) => !name.startsWith('sqlite_') && !made.has(name));
    const sqlOf = db
      .prepare<[string, string], string>(
        'SELECT sql FROM previous.sqlite_master WHERE type = ? AND tbl_name = ? AND sql IS NOT NULL',
      )
      .pluck();
    // Generated columns are made again by the copy, not copied (table_info leaves them out).
    const columnsOf = db.prepare<[string], string>("SELECT name FROM pragma_table_info(?, 'previous')").pluck();
    db.transaction(() => {
      for (const table of tables) {
        db.exec(sqlOf.get('table', table)!);
        const columns = columnsOf
          .all(table)
          .map((column) => `"${column}"`)
          .join(', ');
        db.exec(`INSERT INTO main."${table}" (${columns}) SELECT ${columns} FROM previous."${table}"`);
        for (const index of sqlOf.all('index', table)) db.exec(index);
      }
    })();
  } catch (error) {
    log.warn({ err: error, file: previous }, UNREADABLE);
  } finally {
    db.exec('DETACH DATABASE previous');
  }
}

/** Removes a database file with whatever SQLite kept beside it. */
export function removeWithCompanions(path: string): void {
  for (const suffix of ['', ...COMPANIONS]) rmSync(`${path}${suffix}`, { force: true });
}

/** The file's (or directory's) contents on disk before it is renamed, and the rename before this returns. */
function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
