/**
 * The shared read-decide-append loop against a real SQLite store: expected revisions, a conflict decided
 * again on the newer state, commands of one stream in turn, the cache reading only the tail, snapshots.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandHandler } from '../../src/commands/command-handler.js';
import type { Decider } from '../../src/commands/decider.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../support/gateway.js';

type Added = { type: 'Added'; data: { amount: number } };
type Command = { type: 'Add'; amount: number; max: number };

/** A counter that refuses to go past `max`. */
const counter: Decider<{ total: number }, Command, Added> = {
  eventTypes: new Set(['Added']),
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => ({ total: state.total + event.data.amount }),
  decide(command, state) {
    if (state.total + command.amount > command.max)
      throw new DomainError('invalid_request', `would pass ${command.max}`);
    return command.amount === 0 ? [] : [{ type: 'Added', data: { amount: command.amount } }];
  },
};

describe('CommandHandler', () => {
  let store: SqliteEventStore;
  beforeEach(() => {
    store = new SqliteEventStore(join(tempDir('dmg-commands-'), 'events.sqlite'));
  });
  afterEach(async () => {
    await store.close();
  });

  it('decides on the folded stream and appends with its revision', async () => {
    const handler = new CommandHandler({ store, decider: counter });
    const first = await handler.handle('c-1', { type: 'Add', amount: 2, max: 10 });
    expect(first).toMatchObject({ state: { total: 2 }, revision: 0, events: [{ type: 'Added', data: { amount: 2 } }] });
    expect(first.position).toBeGreaterThan(0);
    const second = await handler.handle('c-1', { type: 'Add', amount: 3, max: 10 });
    expect(second).toMatchObject({ state: { total: 5 }, revision: 1 });
    await expect(handler.handle('c-1', { type: 'Add', amount: 6, max: 10 })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect((await store.readStream('c-1')).map((e) => e.data)).toEqual([{ amount: 2 }, { amount: 3 }]);
  });

  it('appends nothing and answers position 0 when the decision is empty', async () => {
    const handler = new CommandHandler({ store, decider: counter });
    expect(await handler.handle('c-2', { type: 'Add', amount: 0, max: 10 })).toEqual({
      state: { total: 0 },
      events: [],
      revision: -1,
      position: 0,
    });
    expect(await store.readStream('c-2')).toEqual([]);
  });

  it('decides again on the newer state when another writer got in first', async () => {
    // Two handlers are two writers: each decides on the same revision, one append is refused and decided again.
    const a = new CommandHandler({ store, decider: counter });
    const b = new CommandHandler({ store, decider: counter });
    const results = await Promise.allSettled([
      a.handle('c-3', { type: 'Add', amount: 4, max: 7 }),
      b.handle('c-3', { type: 'Add', amount: 4, max: 7 }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'invalid_request', message: 'would pass 7' });
    expect((await store.readStream('c-3')).map((e) => e.data)).toEqual([{ amount: 4 }]);
  });

  it('handles the commands of one stream in turn, each on the state the one before left', async () => {
    const handler = new CommandHandler({ store, decider: counter });
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => handler.handle('c-4', { type: 'Add', amount: 1, max: 5 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(await store.readStream('c-4')).toHaveLength(5);
  });

  it('a cached state reads the events another writer appended since', async () => {
    const cached = new CommandHandler({ store, decider: counter, cacheSize: 10 });
    await cached.handle('c-5', { type: 'Add', amount: 1, max: 100 });
    await store.append('c-5', [{ type: 'Added', data: { amount: 10 } }], { expectedRevision: 0 });
    expect((await cached.handle('c-5', { type: 'Add', amount: 1, max: 100 })).state).toEqual({ total: 12 });
  });

  it('decides on a cached state without reading the stream, and reads its tail when the append is refused', async () => {
    let reads = 0;
    const counted = new Proxy(store, {
      get: (target, key) =>
        key === 'readStream'
          ? (...args: Parameters<SqliteEventStore['readStream']>) => (reads++, target.readStream(...args))
          : Reflect.get(target, key, target),
    });
    const cached = new CommandHandler({ store: counted, decider: counter, cacheSize: 10 });
    await cached.handle('c-8', { type: 'Add', amount: 1, max: 100 });
    const readsAfterFirst = reads;
    await cached.handle('c-8', { type: 'Add', amount: 1, max: 100 });
    expect(reads).toBe(readsAfterFirst);
    // Another writer: the append on the cached revision is refused, the tail read, and the command decided again.
    await store.append('c-8', [{ type: 'Added', data: { amount: 10 } }], { expectedRevision: 1 });
    expect(await cached.handle('c-8', { type: 'Add', amount: 1, max: 100 })).toMatchObject({
      state: { total: 13 },
      revision: 3,
    });
    expect(reads).toBe(readsAfterFirst + 1);
    expect((await store.readStream('c-8')).map((e) => e.data)).toEqual([
      { amount: 1 },
      { amount: 1 },
      { amount: 10 },
      { amount: 1 },
    ]);
  });

  it('reads the tail before an empty decision or a refusal taken on a cached state stands', async () => {
    const cached = new CommandHandler({ store, decider: counter, cacheSize: 10 });
    await cached.handle('c-9', { type: 'Add', amount: 6, max: 10 });
    // Another writer took 5 away: on the cached total (6) adding 5 would pass 10, on the stream's (1) it does not.
    await store.append('c-9', [{ type: 'Added', data: { amount: -5 } }], { expectedRevision: 0 });
    expect(await cached.handle('c-9', { type: 'Add', amount: 5, max: 10 })).toMatchObject({
      state: { total: 6 },
      revision: 2,
    });
    // A decision that is empty on the cached state is taken again on the stream's: here it stays empty, at the stream's revision.
    await store.append('c-9', [{ type: 'Added', data: { amount: 1 } }], { expectedRevision: 2 });
    expect(await cached.handle('c-9', { type: 'Add', amount: 0, max: 10 })).toEqual({
      state: { total: 7 },
      events: [],
      revision: 3,
      position: 0,
    });
    await expect(cached.handle('c-9', { type: 'Add', amount: 4, max: 10 })).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'would pass 10',
    });
  });

  it('saves a snapshot every N events and starts from it', async () => {
    const handler = new CommandHandler({ store, decider: counter, snapshots: { every: 3 } });
    for (let i = 0; i < 4; i++) await handler.handle('c-6', { type: 'Add', amount: 1, max: 100 });
    expect(await store.loadSnapshot('c-6')).toEqual({ revision: 2, state: { total: 3 } });
    // A handler that starts afresh folds the snapshot and the one event after it.
    expect(await new CommandHandler({ store, decider: counter, snapshots: { every: 3 } }).load('c-6')).toEqual({
      state: { total: 4 },
      revision: 3,
      snapshotRevision: 2,
    });
  });

  it('gives deterministic ids to the events, so a repeated append records once', async () => {
    const handler = new CommandHandler({
      store,
      decider: counter,
      eventIds: (events, { revision }) =>
        events.map((_, i) => `00000000-0000-4000-8000-${String(revision + 1 + i).padStart(12, '0')}`),
    });
    await handler.handle('c-7', { type: 'Add', amount: 1, max: 100 });
    expect((await store.readStream('c-7'))[0].id).toBe('00000000-0000-4000-8000-000000000000');
  });
});
