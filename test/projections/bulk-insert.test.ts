/** Rows gathered during a batch and written at its end with multi-row INSERTs, into a real SQLite file. */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BulkInsert, MOST_ROWS_PER_STATEMENT } from '../../src/projections/bulk-insert.js';
import { tempDir } from '../support/temp-dir.js';

const open: Database.Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

/** A table `t (k TEXT, n INTEGER, note TEXT)` in a fresh file, and the rows each statement run inserted. */
function table(key = '') {
  const db = new Database(join(tempDir('dmg-bulk-insert-'), 'rows.sqlite'));
  open.push(db);
  db.exec(`CREATE TABLE t (k TEXT ${key}, n INTEGER, note TEXT)`);
  const runs: number[] = [];
  // The real database, with each statement's runs counted by the rows its text inserts.
  const counted = {
    prepare(sql: string) {
      const statement = db.prepare(sql);
      const rows = sql.split('(?, ?, ?)').length - 1;
      return { run: (values: unknown[]) => (runs.push(rows), statement.run(values)) };
    },
  } as unknown as Database.Database;
  const rows = () => db.prepare('SELECT k, n, note FROM t ORDER BY rowid').all() as Array<{ k: string; n: number }>;
  return { db: counted, runs, rows };
}

describe('bulk insert', () => {
  it.each([
    [0, []],
    [1, [1]],
    [3, [2, 1]],
    [63, [32, 16, 8, 4, 2, 1]],
    [64, [64]],
    [65, [64, 1]],
    [100, [64, 32, 4]],
    [128, [64, 64]],
    [129, [64, 64, 1]],
    [200, [64, 64, 64, 8]],
  ])('writes %i rows in order, whole statements then the rest in powers of two: %j', (count, statements) => {
    const t = table();
    const insert = new BulkInsert(t.db, 'INSERT INTO t', ['k', 'n', 'note']);
    for (let i = 0; i < count; i++) insert.add(`k${i}`, i, i % 2 === 0 ? null : 'odd');
    // Whole statements were written as they filled; the rest waits for flush().
    expect(insert.size).toBe(count % MOST_ROWS_PER_STATEMENT);
    expect(t.rows()).toHaveLength(count - (count % MOST_ROWS_PER_STATEMENT));
    insert.flush();
    expect(insert.size).toBe(0);
    expect(t.runs).toEqual(statements);
    expect(t.rows()).toEqual(
      Array.from({ length: count }, (_, i) => ({ k: `k${i}`, n: i, note: i % 2 === 0 ? null : 'odd' })),
    );
    expect(Math.max(0, ...t.runs)).toBeLessThanOrEqual(MOST_ROWS_PER_STATEMENT);
  });

  it('takes rows given as objects, and starts empty again after each flush', () => {
    const t = table();
    const insert = new BulkInsert(t.db, 'INSERT INTO t', ['k', 'n', 'note']);
    insert.addObject({ n: 1, note: 'x', k: 'a', other: 'not a column' });
    insert.flush();
    insert.flush();
    insert.addObject({ k: 'b', n: 2, note: null });
    insert.flush();
    expect(t.rows()).toEqual([
      { k: 'a', n: 1, note: 'x' },
      { k: 'b', n: 2, note: null },
    ]);
    expect(t.runs).toEqual([1, 1]);
  });

  it('with keyColumns writes the rows in key order, equal keys in the order added, across statement boundaries', () => {
    const t = table();
    const insert = new BulkInsert(t.db, 'INSERT INTO t', ['k', 'n', 'note'], { keyColumns: 1 });
    const added = Array.from({ length: 150 }, (_, i) => ({ k: `key-${(i * 37) % 11}`, n: i, note: null }));
    for (const row of added) insert.addObject(row);
    insert.flush();
    const expected = [...added].sort((a, b) => (a.k === b.k ? a.n - b.n : a.k < b.k ? -1 : 1));
    expect(t.rows()).toEqual(expected);
    expect(t.runs).toEqual([64, 64, 16, 4, 2]);
  });

  it('with keyColumns holds every row until flush(), then writes them all', () => {
    const t = table();
    const insert = new BulkInsert(t.db, 'INSERT INTO t', ['k', 'n', 'note'], { keyColumns: 2 });
    for (let i = 0; i < 65; i++) insert.add('same', 64 - i, null);
    expect(t.rows()).toEqual([]);
    expect(insert.size).toBe(65);
    insert.flush();
    expect(t.rows().map((r) => r.n)).toEqual(Array.from({ length: 65 }, (_, i) => i));
  });

  it('with an ON CONFLICT suffix, a key added twice in one batch ends as the later row', () => {
    const t = table('PRIMARY KEY');
    const insert = new BulkInsert(t.db, 'INSERT INTO t', ['k', 'n', 'note'], {
      suffix: 'ON CONFLICT (k) DO UPDATE SET n = excluded.n',
    });
    for (let i = 0; i < 70; i++) insert.add(`k${i % 40}`, i, null);
    insert.flush();
    expect(t.rows()).toHaveLength(40);
    expect(t.rows().find((r) => r.k === 'k5')?.n).toBe(45);
    expect(t.rows().find((r) => r.k === 'k39')?.n).toBe(39);
  });

  it('discard() drops the rows gathered; a row of the wrong width is refused', () => {
    const t = table();
    const insert = new BulkInsert(t.db, 'INSERT INTO t', ['k', 'n', 'note']);
    insert.add('a', 1, null);
    insert.discard();
    insert.flush();
    expect(t.rows()).toEqual([]);
    expect(() => insert.add('a', 1)).toThrow(/3 values/);
    expect(insert.size).toBe(0);
  });
});
