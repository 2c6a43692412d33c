import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GroupCommitter } from '../../../src/eventstore/sqlite/group-committer.js';
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

  it('keeps what it acknowledged across a reopen, in WAL mode with full sync', async () => {
    const file = join(tempDir(), 'events.sqlite');
    const store = new SqliteEventStore(file);
    await Promise.all(Array.from({ length: 100 }, (_, i) => store.append(`s-${i % 7}`, [{ type: 'N', data: { i } }])));
    await store.close();
    const reopened = new SqliteEventStore(file);
    expect(await reopened.readAll()).toHaveLength(100);
    expect(reopened.integrityCheck()).toBe('ok');
    await reopened.close();
  });
});
