/**
 * What a member knows of the others (src/cluster/member-liveness.ts), on a real SQLite store and a clock the test
 * moves: a member that left is forgotten PRUNE_AFTER_TIMEOUTS lease timeouts after it was seen leaving, and not
 * later because it still held a lease then (its release failed).
 */
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { memberStream } from '../../src/cluster/lease-events.js';
import { MemberLiveness } from '../../src/cluster/member-liveness.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../support/temp-dir.js';

const TIMEOUT_MS = 1_000;
const at = '2026-01-01T00:00:00.000Z';
const stores: SqliteEventStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

describe('MemberLiveness', () => {
  it('forgets a member that left long ago, even one whose lease outlived it, once the lease is taken', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-liveness-'), 'events.sqlite'));
    stores.push(store);
    const reads: string[] = [];
    const counted = Object.create(store) as SqliteEventStore;
    counted.readStream = (streamId, options) => {
      reads.push(streamId);
      return store.readStream(streamId, options);
    };
    let now = 0;
    const liveness = new MemberLiveness({
      store: counted,
      memberId: 'a',
      timeoutMs: TIMEOUT_MS,
      heartbeatMs: TIMEOUT_MS / 3,
      log: pino({ level: 'silent' }),
      now: () => now,
    });
    await store.append(memberStream('b'), [
      { type: 'MemberJoined', data: { memberId: 'b', host: 'h', pid: 1, at } },
      { type: 'MemberLeft', data: { memberId: 'b', at } },
    ]);
    liveness.observe(await store.readStream(memberStream('b')));
    const known = liveness as unknown as { seen: Map<string, number>; left: Map<string, number> };
    expect([...known.left]).toEqual([['b', 0]]);

    // Long after, b still holds a lease: it stays known as left, so its stream needs no read and is not taken
    // for news of it leaving just now.
    now = 11 * TIMEOUT_MS;
    liveness.prune(new Set(['b']));
    const live = liveness.liveMembers();
    await liveness.confirmSilent(live, ['b'], () => false);
    expect([...live]).toEqual(['a']);
    expect(reads).toEqual([]);
    expect([...known.left]).toEqual([['b', 0]]);

    // The lease taken, the next prune forgets b.
    liveness.prune(new Set(['a']));
    expect([...known.left]).toEqual([]);
    expect([...known.seen]).toEqual([]);
  });

  it('reads a silent holder it never saw leave and learns from its stream that it left', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-liveness-'), 'events.sqlite'));
    stores.push(store);
    let now = 0;
    const liveness = new MemberLiveness({
      store,
      memberId: 'a',
      timeoutMs: TIMEOUT_MS,
      heartbeatMs: TIMEOUT_MS / 3,
      log: pino({ level: 'silent' }),
      now: () => now,
    });
    await store.append(memberStream('c'), [{ type: 'MemberJoined', data: { memberId: 'c', host: 'h', pid: 2, at } }]);
    liveness.observe(await store.readStream(memberStream('c')));
    await store.append(memberStream('c'), [{ type: 'MemberLeft', data: { memberId: 'c', at } }]);
    now = 2 * TIMEOUT_MS;
    const live = liveness.liveMembers();
    expect([...live]).toEqual(['a']);
    await liveness.confirmSilent(live, ['c'], () => false);
    expect([...live]).toEqual(['a']);
    const known = liveness as unknown as { left: Map<string, number> };
    expect([...known.left]).toEqual([['c', 2 * TIMEOUT_MS]]);
  });
});
