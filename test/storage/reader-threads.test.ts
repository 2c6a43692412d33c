/**
 * Reads on threads of their own (src/storage/reader-threads.ts): real worker threads on a real SQLite file. A
 * thread answers once ready; before that, after it failed and once closed, the main thread answers, with what
 * the caller would have got there (errors too).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ReaderThreads } from '../../src/storage/reader-threads.js';
import { Refused, testReads } from '../support/reader-thread-queries.js';
import { tempDir } from '../support/temp-dir.js';

const ENTRY = new URL('../support/reader-thread-entry.ts', import.meta.url);

function setUp(threads: number) {
  const file = join(tempDir('dmg-readers-'), 'reads.sqlite');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (x INTEGER)');
  let now = 0;
  const failures: string[] = [];
  const readers = new ReaderThreads({
    entry: ENTRY,
    file,
    threads,
    local: testReads(db),
    now: () => now,
    onFailure: (error) => failures.push(error.message),
  });
  onTestFinished(async () => {
    await readers.close();
    db.close();
  });
  return { db, readers, failures, later: (ms: number) => (now += ms) };
}

describe('reader threads', () => {
  it('answer once ready, the main thread before (a call never waits for a thread to start)', async () => {
    const { readers } = setUp(2);
    expect(await readers.run('where')).toBe(0);
    await readers.ready();
    expect(readers.readyThreads).toBe(2);
    const answers = await Promise.all([readers.run('where'), readers.run('where'), readers.run('where')]);
    expect(answers.every((id) => id !== 0)).toBe(true);
    // The fewest calls under way: two calls at once go to both threads.
    expect(new Set(answers).size).toBe(2);
    expect(readers.answered).toEqual({ thread: 3, local: 1 });
  });

  it('read what the main connection committed before the call', async () => {
    const { db, readers } = setUp(1);
    await readers.ready();
    expect(await readers.run('rows')).toBe(0);
    db.prepare('INSERT INTO t VALUES (1), (2)').run();
    expect(await readers.run('rows')).toBe(2);
    expect(readers.answered.local).toBe(0);
  });

  it('a query that throws on a thread is run again on the main thread: the caller gets the error it would there', async () => {
    const { readers } = setUp(1);
    await readers.ready();
    const refused = readers.run('refuse', 'no such chat');
    await expect(refused).rejects.toBeInstanceOf(Refused);
    await expect(refused).rejects.toThrow('no such chat');
    expect(readers.answered).toEqual({ thread: 0, local: 1 });
    // The thread is still there for the next call.
    expect(await readers.run('where')).not.toBe(0);
  });

  it('a thread that ends has its calls answered here; threads start again 5 s later', async () => {
    const { readers, later, failures } = setUp(2);
    await readers.ready();
    expect(await readers.run('end')).toBe('main');
    expect(failures).toEqual(['a reader thread ended (exit code 3)']);
    expect(readers.readyThreads).toBe(0);
    expect(await readers.run('where')).toBe(0);
    later(4_999);
    expect(await readers.run('where')).toBe(0);
    later(1);
    expect(await readers.run('where')).toBe(0);
    await readers.ready();
    expect(readers.readyThreads).toBe(2);
    expect(await readers.run('where')).not.toBe(0);
  });

  it('with no threads, every call is answered on the main thread', async () => {
    const { readers } = setUp(0);
    await readers.ready();
    expect(await readers.run('where')).toBe(0);
    expect(readers.readyThreads).toBe(0);
  });

  it('closing answers the calls under way on the main thread, and the calls after it', async () => {
    const { readers } = setUp(1);
    await readers.ready();
    const underWay = readers.run('where');
    await readers.close();
    expect(await underWay).toBe(0);
    expect(await readers.run('where')).toBe(0);
  });
});
