import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GroupCommitter } from '../../../src/eventstore/sqlite/group-committer.js';
import { WalSync } from '../../../src/eventstore/sqlite/wal-sync.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { WrongExpectedRevisionError } from '../../../src/eventstore/event-store.js';
import { tempDir } from '../../support/temp-dir.js';

describe('group commit', () => {
  it('hands requests of the same turn to one commit, results in order', async () => {
    const batches: number[][] = [];
    const committer = new GroupCommitter<number, number>((batch) => {
      batches.push([...batch]);
      return batch.map((n) => (n === 3 ? new Error('three') : n * 10));
    });
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => committer.submit(i)));
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(50);
    expect(results[3]).toMatchObject({ status: 'rejected', reason: { message: 'three' } });
    expect(results[7]).toEqual({ status: 'fulfilled', value: 70 });
  });

  it('one refused append does not fail the others of its group', async () => {
    const store = new SqliteEventStore(join(tempDir(), 'events.sqlite'));
    await store.append('a', [{ type: 'X', data: {} }]);
    const outcomes = await Promise.allSettled([
      store.append('b', [{ type: 'X', data: {} }]),
      store.append('a', [{ type: 'X', data: {} }], { expectedRevision: 'no_stream' }),
      store.append('c', [{ type: 'X', data: {} }]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
    expect((await store.readAll()).map((e) => e.streamId)).toEqual(['a', 'b', 'c']);
    await store.close();
  });

  it('keeps what it acknowledged across a reopen, in WAL mode with the WAL flushed before each answer', async () => {
    const file = join(tempDir(), 'events.sqlite');
    const store = new SqliteEventStore(file);
    await Promise.all(Array.from({ length: 100 }, (_, i) => store.append(`s-${i % 7}`, [{ type: 'N', data: { i } }])));
    await store.close();
    const reopened = new SqliteEventStore(file);
    expect(await reopened.readAll()).toHaveLength(100);
    expect(reopened.integrityCheck()).toBe('ok');
    await reopened.close();
  });

  it('answers a committed batch only once it is durable, and commits the next batch meanwhile', async () => {
    const flushes: Array<{ done: () => void; fail: (error: Error) => void }> = [];
    const committed: number[][] = [];
    const committer = new GroupCommitter<number, number>(
      (batch) => {
        committed.push([...batch]);
        return batch.map((n) => n * 10);
      },
      undefined,
      undefined,
      () => new Promise<void>((done, fail) => flushes.push({ done, fail })),
    );
    const answered: number[] = [];
    const first = committer.submit(1).then((v) => answered.push(v));
    await new Promise((resolve) => setImmediate(resolve));
    const second = committer.submit(2).then(
      (v) => answered.push(v),
      (e: Error) => answered.push(-1) && e,
    );
    await new Promise((resolve) => setImmediate(resolve));
    // Both batches are committed, neither is answered: the disk has not confirmed them.
    expect(committed).toEqual([[1], [2]]);
    expect(answered).toEqual([]);
    let drained = false;
    const drain = committer.drain().then(() => (drained = true));
    flushes[0].done();
    await first;
    expect(answered).toEqual([10]);
    expect(drained).toBe(false);
    flushes[1].fail(new Error('EIO'));
    await second;
    await drain;
    expect(answered).toEqual([10, -1]);
  });

  it('flushes the WAL once for all the commits made while a flush runs', async () => {
    const dir = tempDir();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    await store.append('a', [{ type: 'X', data: {} }]); // the WAL file exists
    const sync = new WalSync(join(dir, 'events.sqlite-wal'));
    const flushed: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => sync.sync().then(() => flushed.push(i))));
    expect(flushed).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(sync.flushes).toBe(2); // the first call's flush, then one for the 19 that came while it ran
    sync.close();
    await expect(new WalSync(join(dir, 'missing-wal')).sync()).rejects.toMatchObject({ code: 'ENOENT' });
    await store.close();
  });

  it('trusts no flush after one failed: every later sync fails at once, without flushing', async () => {
    // A file that cannot be flushed: procfs has no fsync (EINVAL), as a disk's EIO would fail it.
    const sync = new WalSync('/proc/self/status');
    const first = sync.sync();
    await expect(first).rejects.toMatchObject({ code: 'EINVAL' });
    const flushes = sync.flushes;
    // The pages of the failed flush may be gone for good: a later commit must not be answered as durable.
    await expect(sync.sync()).rejects.toBe(await first.catch((error: unknown) => error));
    expect(sync.flushes).toBe(flushes);
    sync.close();
  });
});
