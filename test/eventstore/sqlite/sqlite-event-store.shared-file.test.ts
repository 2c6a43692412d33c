/**
 * Several writer processes on one SQLite file (GATEWAY_PROCESSES): each store's live subscribers see every
 * commit, its own and the others', in position order with no gap and no duplicate. Two stores on one file in
 * this process are two connections, as two processes would be; a child process writes too.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { StoreUnavailableError, type StoredEvent } from '../../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../../support/temp-dir.js';
import { eventually } from '../../support/eventually.js';

const ev = (type: string, data: unknown = {}) => ({ type, data });

async function collect(store: SqliteEventStore, count: number): Promise<StoredEvent[]> {
  const seen: StoredEvent[] = [];
  const subscription = store.subscribe();
  for await (const batch of subscription) {
    seen.push(...batch);
    if (seen.length >= count) break;
  }
  await subscription.close();
  return seen;
}

describe('sqlite store shared by several writers', () => {
  it("feeds each store's subscribers the other's commits too, in order, once", async () => {
    const file = join(tempDir('dmg-shared-'), 'events.sqlite');
    const a = new SqliteEventStore(file, { sharedFile: true });
    const b = new SqliteEventStore(file, { sharedFile: true });
    try {
      const total = 400;
      const seenByA = collect(a, total);
      const seenByB = collect(b, total);
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < total / 2; i++) {
        writes.push(a.append(`a-${i % 7}`, [ev('A', { i })]));
        writes.push(b.append(`b-${i % 5}`, [ev('B', { i })]));
        // In rounds: each store's tail meets the other's commits several times, not once at the end.
        if (i % 20 === 0) await Promise.all(writes);
      }
      await Promise.all(writes);
      for (const seen of [await seenByA, await seenByB]) {
        expect(seen.map((e) => e.position)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('with tailIntervalMs, reads the commits another process makes within the interval together, the first at once', async () => {
    const file = join(tempDir('dmg-shared-'), 'events.sqlite');
    // The follower, as the machine projector: it serves nothing, and projects fewer, larger batches.
    const follower = new SqliteEventStore(file, { sharedFile: true, tailIntervalMs: 1_000 });
    const writer = new SqliteEventStore(file, { sharedFile: true });
    const batches: number[][] = [];
    const subscription = follower.subscribe();
    const reading = (async () => {
      for await (const batch of subscription) batches.push(batch.map((event) => event.position));
    })();
    try {
      await writer.append('w', [ev('W', { i: 0 })]);
      await eventually(() => batches.length === 1, 'the first commit, read at once');
      // Three commits of their own, each on disk before the next: within the interval, read as one batch.
      for (let i = 1; i <= 3; i++) await writer.append('w', [ev('W', { i })]);
      await eventually(() => batches.flat().length === 4, 'the three commits after it');
      expect(batches).toEqual([[1], [2, 3, 4]]);
    } finally {
      await subscription.close();
      await reading;
      await follower.close();
      await writer.close();
    }
  });

  it('sees the commits of another process and waits for its write lock instead of failing', async () => {
    const file = join(tempDir('dmg-shared-'), 'events.sqlite');
    const store = new SqliteEventStore(file, { sharedFile: true });
    try {
      const subscription = store.subscribe();
      const seen: StoredEvent[] = [];
      const reading = (async () => {
        for await (const batch of subscription) seen.push(...batch);
      })();
      const script = `
        const Database = require('better-sqlite3');
        const db = new Database(${JSON.stringify(file)});
        db.pragma('busy_timeout = 5000');
        for (let i = 0; i < 50; i++) {
          db.transaction(() => {
            db.prepare("INSERT INTO events (stream_id, revision, event_id, type, data, metadata, created_at) VALUES ('child', ?, ?, 'C', '{}', NULL, 0)").run(i, 'id-' + i);
            db.prepare("INSERT INTO streams (stream_id, revision) VALUES ('child', ?) ON CONFLICT(stream_id) DO UPDATE SET revision = excluded.revision").run(i);
          }).immediate();
        }
        db.close();`;
      const own = Array.from({ length: 50 }, (_, i) => store.append('own', [ev('O', { i })]));
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', script], { stdio: 'inherit' });
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
      });
      await Promise.all(own);
      await eventually(() => seen.length >= 100, "the child process's events");
      expect(seen.map((e) => e.position)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
      expect(seen.filter((e) => e.streamId === 'child').map((e) => e.revision)).toEqual(
        Array.from({ length: 50 }, (_, i) => i),
      );
      await subscription.close();
      await reading;
    } finally {
      await store.close();
    }
  });

  it('waits for a write lock another process holds without blocking its event loop, and writes once it is free', async () => {
    const file = join(tempDir('dmg-shared-'), 'events.sqlite');
    const store = new SqliteEventStore(file, { sharedFile: true });
    // Another process in the middle of a write (or paused inside one): it holds the file's write lock.
    const other = new Database(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      const settled: string[] = [];
      const appended = store.append('s', [ev('A')]).then(
        () => settled.push('appended'),
        (error: unknown) => settled.push(`failed: ${(error as Error).message}`),
      );
      // Timers still run meanwhile: the process keeps answering what needs no write. A wait inside SQLite (its busy
      // handler sleeps on this thread) would hold them for the busy timeout, 5 s: the longest gap between two ticks
      // shows it. The first commit of a store counts too (its PRAGMAs were once not in effect on their first run).
      let ticks = 0;
      let last = performance.now();
      let longestGap = 0;
      const ticking = setInterval(() => {
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
        ticks += 1;
      }, 5);
      try {
        await eventually(() => ticks >= 20, 'timers running while the append waits for the lock');
      } finally {
        clearInterval(ticking);
      }
      expect(longestGap).toBeLessThan(2_500);
      expect(settled).toEqual([]);
      expect(await store.readAll()).toEqual([]);
      other.exec('COMMIT');
      await appended;
      expect(settled).toEqual(['appended']);
      expect((await store.readAll()).map((e) => e.type)).toEqual(['A']);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('gives up on a write lock held past its busy timeout: the append fails as unavailable and writes nothing', async () => {
    const file = join(tempDir('dmg-shared-'), 'events.sqlite');
    const store = new SqliteEventStore(file, { sharedFile: true, busyTimeoutMs: 300 });
    const other = new Database(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      await expect(store.append('s', [ev('A')])).rejects.toBeInstanceOf(StoreUnavailableError);
      other.exec('ROLLBACK');
      expect(await store.readAll()).toEqual([]);
      // The lock is free again: the next append goes through.
      await store.append('s', [ev('B')]);
      expect((await store.readAll()).map((e) => e.type)).toEqual(['B']);
    } finally {
      other.close();
      await store.close();
    }
  });
});
