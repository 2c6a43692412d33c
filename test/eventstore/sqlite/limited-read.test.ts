/**
 * LimitedRead (src/eventstore/sqlite/limited-read.ts): the log's reads with their LIMIT in the statement's text
 * answer what a bound LIMIT answered, for every limit, "no limit", and the limits past the cached ones.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LimitedRead } from '../../../src/eventstore/sqlite/limited-read.js';

describe('LimitedRead', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE events (position INTEGER PRIMARY KEY, stream_id TEXT)');
  const insert = db.prepare('INSERT INTO events (stream_id) VALUES (?)');
  for (let i = 0; i < 200; i++) insert.run(`s${i % 3}`);
  const read = new LimitedRead<[number]>(
    db,
    'SELECT position, stream_id FROM events WHERE position > ? ORDER BY position',
  );
  const expected = (after: number, limit: number) =>
    Array.from({ length: Math.max(0, Math.min(limit, 200 - after)) }, (_, i) => [after + i + 1, `s${(after + i) % 3}`]);

  it('answers as a bound LIMIT would, for each limit, 0 and none', () => {
    expect(read.all(0, 10)).toEqual([]);
    expect(read.all(5, 10)).toEqual(expected(10, 5));
    expect(read.all(5, 10)).toEqual(expected(10, 5));
    expect(read.all(Number.MAX_SAFE_INTEGER, 150)).toEqual(expected(150, 1_000));
  });

  it('serves limits past the cached ones with the bound statement', () => {
    for (let limit = 1; limit <= 100; limit++) expect(read.all(limit, 120)).toEqual(expected(120, limit));
  });
});
