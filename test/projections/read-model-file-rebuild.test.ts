/**
 * `npm run rebuild`'s way with a read-model file (src/projections/read-model-file-rebuild.ts): built afresh beside the
 * old one in one transaction, then put in its place; the old file kept as it was when the rebuild fails, its WAL never
 * applied to the new file, the tables no read model makes carried over.
 */
import { copyFileSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { LookupCache } from '../../src/contacts/lookup-cache.js';
import { StoreUnavailableError } from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { READ_MODEL_FILE, openReadModelDb } from '../../src/projections/read-model-db.js';
import { rebuildReadModelFile } from '../../src/projections/read-model-file-rebuild.js';
import { BufferedCountingProjection } from '../support/buffered-counting-projection.js';
import { tempDir } from '../support/temp-dir.js';

const log = pino({ level: 'silent' });

/** The read model of these tests, over the database given. */
const counting = (db: Database.Database) => [new BufferedCountingProjection(db)];

const ticks = (n: number) => Array.from({ length: n }, () => ({ type: 'Tick', data: {} }));

/** A log of 4,500 events over two streams, and the read-model file a live runner made of it. */
async function liveDataDir() {
  const dir = tempDir();
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  await store.append('s-a', ticks(2_500));
  await store.append('s-b', ticks(1_000));
  const last = await store.append('s-a', ticks(1_000));
  const db = openReadModelDb(dir);
  const runner = new ProjectionRunner(store, db, [new BufferedCountingProjection(db)], log);
  await runner.start();
  await runner.stop();
  db.close();
  return { dir, store, last: last.position, file: join(dir, READ_MODEL_FILE) };
}

function read(file: string) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return {
      counts: db.prepare('SELECT stream, n FROM buffered_counts ORDER BY stream').all(),
      checkpoints: db.prepare('SELECT name, position FROM projection_checkpoints').all(),
      indexes: db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'buffered_counts'")
        .pluck()
        .all(),
      journal: db.pragma('journal_mode', { simple: true }),
      integrity: db.pragma('integrity_check', { simple: true }),
    };
  } finally {
    db.close();
  }
}

const expected = (last: number) => ({
  counts: [
    { stream: 's-a', n: 3_500 },
    { stream: 's-b', n: 1_000 },
  ],
  checkpoints: [{ name: 'buffered-counts', position: last }],
  indexes: expect.arrayContaining(['buffered_counts_by_n']),
  journal: 'wal',
  integrity: 'ok',
});

describe('rebuilding a read-model file', () => {
  it("builds in one transaction what the live runner built, writing buffered rows as it goes, and takes the old file's place", async () => {
    const { dir, store, last, file } = await liveDataDir();
    expect(read(file)).toEqual(expected(last));
    let made: BufferedCountingProjection | undefined;
    const rebuilt = await rebuildReadModelFile(
      store,
      dir,
      READ_MODEL_FILE,
      (db) => [(made = new BufferedCountingProjection(db))],
      log,
      {
        flushEvents: 1_000,
      },
    );
    expect(rebuilt.events).toBe(last);
    // Pages of 2,000 events: written after the first page, the second, and once at the end.
    expect(made!.flushes).toBe(3);
    expect(read(file)).toEqual(expected(last));
    expect(readdirSync(dir).filter((name) => name.includes('.rebuild'))).toEqual([]);
    await store.close();
  });

  it('applies a failing transaction again page by page, leaving out only the event whose handler throws', async () => {
    const { dir, store, file } = await liveDataDir();
    const boom = await store.append('s-c', [{ type: 'Boom', data: {} }]);
    const last = await store.append('s-b', ticks(10));
    await rebuildReadModelFile(store, dir, READ_MODEL_FILE, counting, log);
    expect(boom.position).toBeLessThan(last.position);
    expect(read(file).counts).toEqual([
      { stream: 's-a', n: 3_500 },
      { stream: 's-b', n: 1_010 },
    ]);
    expect(read(file).integrity).toBe('ok');
    await store.close();
  });

  it('leaves the old file as it was when the log cannot be read, and nothing beside it', async () => {
    const { dir, store, last, file } = await liveDataDir();
    const readAll = store.readAll.bind(store);
    let reads = 0;
    vi.spyOn(store, 'readAll').mockImplementation((options) =>
      ++reads >= 3 ? Promise.reject(new StoreUnavailableError('store down')) : readAll(options),
    );
    await expect(rebuildReadModelFile(store, dir, READ_MODEL_FILE, counting, log)).rejects.toThrow('store down');
    // Two pages applied before the read that failed.
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(read(file)).toEqual(expected(last));
    expect(readdirSync(dir).filter((name) => name.includes('.rebuild'))).toEqual([]);
    await store.close();
  });

  it('carries over the tables no read model makes, with their indexes, their generated columns made again', async () => {
    const { dir, store, last, file } = await liveDataDir();
    const old = openReadModelDb(dir);
    new LookupCache(old, () => 1_000).put('d1', 'check', '4915100000001', { exists: true }, 60_000);
    old.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL,
        loud TEXT GENERATED ALWAYS AS (upper(text)) STORED);
      CREATE INDEX notes_by_loud ON notes (loud);
      INSERT INTO notes (text) VALUES ('kept'), ('also kept');
      INSERT INTO buffered_counts (stream, n) VALUES ('not-in-the-log', 1)`);
    old.close();
    await rebuildReadModelFile(store, dir, READ_MODEL_FILE, counting, log);
    // Rebuilt from the log: the row written by hand into a read model's table is gone.
    expect(read(file)).toEqual(expected(last));
    const db = new Database(file);
    expect(new LookupCache(db, () => 2_000).get('d1', 'check', '4915100000001')).toEqual({ exists: true });
    expect(db.prepare('SELECT id, text, loud FROM notes ORDER BY id').all()).toEqual([
      { id: 1, text: 'kept', loud: 'KEPT' },
      { id: 2, text: 'also kept', loud: 'ALSO KEPT' },
    ]);
    const indexes = db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (?, ?) ORDER BY name",
    );
    expect(indexes.pluck().all('notes', 'contact_lookups')).toEqual(['contact_lookups_by_expiry', 'notes_by_loud']);
    db.close();
    await store.close();
  });

  it("removes the old file's WAL (never applied to the new file) and what a killed rebuild left", async () => {
    const { dir, store, last, file } = await liveDataDir();
    // A gateway killed with writes still in its WAL: that WAL belongs to the old file only.
    const old = openReadModelDb(dir);
    old.pragma('wal_autocheckpoint = 0');
    old.exec(`CREATE TABLE IF NOT EXISTS filler (bytes BLOB NOT NULL);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
      INSERT INTO filler (bytes) SELECT zeroblob(4000) FROM n`);
    copyFileSync(`${file}-wal`, join(dir, 'wal-of-the-old-file'));
    old.close();
    copyFileSync(join(dir, 'wal-of-the-old-file'), `${file}-wal`);
    // A rebuild killed halfway: its fresh file and journal.
    writeFileSync(`${file}.rebuild`, 'half a file');
    writeFileSync(`${file}.rebuild-journal`, 'half a journal');
    await rebuildReadModelFile(store, dir, READ_MODEL_FILE, counting, log);
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}.rebuild`)).toBe(false);
    expect(existsSync(`${file}.rebuild-journal`)).toBe(false);
    expect(read(file)).toEqual(expected(last));
    // The filler table is carried over, as the WAL left it in the old file.
    const db = openReadModelDb(dir);
    expect(db.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(200);
    db.close();
    await store.close();
  });

  it('replaces an old file that cannot be read, with a warning, and removes what lay beside it', async () => {
    const { dir, store, last, file } = await liveDataDir();
    writeFileSync(file, Buffer.alloc(8_192, 'damaged '));
    writeFileSync(`${file}-wal`, Buffer.alloc(8_192, 'damaged '));
    writeFileSync(`${file}-shm`, Buffer.alloc(32_768, 'damaged '));
    const warnings: string[] = [];
    const warned = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    await rebuildReadModelFile(store, dir, READ_MODEL_FILE, counting, warned);
    expect(warnings.join('')).toContain('the old read-model file cannot be read');
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
    expect(read(file)).toEqual(expected(last));
    await store.close();
  });
});
