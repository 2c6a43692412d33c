/**
 * The shared file's tail on its own (no file): how this process's own commits and the other processes' reach its
 * live subscribers, and how often the file is read for it. The store's behaviour over a real file with several
 * writers: sqlite-event-store.shared-file.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StoredEvent } from '../../../src/eventstore/event-store.js';
import { LiveFeed } from '../../../src/eventstore/sqlite/live-feed.js';
import { SharedFileTail } from '../../../src/eventstore/sqlite/shared-file-tail.js';
import { storedEvent as event } from '../support/stored-event.js';

/** A log several processes write to, and a tail over it with a manual change signal and clock. */
function world(intervalMs: number) {
  const log: StoredEvent[] = [];
  let version = 1;
  let now = 0;
  let signal: () => void = () => undefined;
  const feed = new LiveFeed();
  const published: number[][] = [];
  vi.spyOn(feed, 'publish').mockImplementation((events) => void published.push(events.map((e) => e.position)));
  const reads = { count: 0 };
  const tail = new SharedFileTail({
    file: 'unused',
    feed,
    intervalMs,
    head: () => log.length,
    dataVersion: () => version,
    readAfter: (after, maxCount) => {
      reads.count += 1;
      return log.filter((e) => e.position > after).slice(0, maxCount);
    },
    watch: (_file, changed) => {
      signal = changed;
      return { close: () => undefined };
    },
    now: () => now,
  });
  return {
    tail,
    published,
    reads,
    /** Another process commits: data_version moves and the WAL changes (the signal comes later, or not). */
    otherCommits: () => {
      log.push(event(log.length + 1, 'other'));
      version += 1;
    },
    /** This process commits (data_version does not move for its own connection); the events, as publishOwn gets them. */
    ownCommits: () => {
      const own = event(log.length + 1, 'own');
      log.push(own);
      return [own];
    },
    signal: () => signal(),
    advance: (ms: number) => {
      now += ms;
      vi.advanceTimersByTime(ms);
    },
  };
}

describe('SharedFileTail', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('hands over own commits that follow what was fed without reading the file', () => {
    const w = world(2);
    w.tail.publishOwn(w.ownCommits());
    w.tail.publishOwn(w.ownCommits());
    expect(w.published).toEqual([[1], [2]]);
    expect(w.reads.count).toBe(0);
    w.tail.close();
  });

  it('reads an own commit that follows others not read yet with them at the next read, within the interval, in order', () => {
    const w = world(2);
    w.otherCommits();
    w.signal();
    expect(w.published).toEqual([[1]]);
    const readsAfterFirst = w.reads.count;
    w.advance(0.5);
    // Another process commits, then this one, before the other's commit was read: not read at once (one read per
    // own commit, with busy writers), but with the next read, at most the interval after the last.
    w.otherCommits();
    w.tail.publishOwn(w.ownCommits());
    w.signal();
    expect(w.reads.count).toBe(readsAfterFirst);
    expect(w.published).toEqual([[1]]);
    w.advance(1.5);
    expect(w.published).toEqual([[1], [2, 3]]);
    // Once read, the own commit is not fed again, and the next own commit follows it.
    w.tail.publishOwn(w.ownCommits());
    expect(w.published).toEqual([[1], [2, 3], [4]]);
    w.tail.close();
  });

  it('reads an own commit that follows others at once when the file was not read within the interval', () => {
    const w = world(2);
    w.otherCommits();
    w.tail.publishOwn(w.ownCommits());
    expect(w.published).toEqual([[1, 2]]);
    w.tail.close();
  });

  it('feeds an own commit already read from the file (a read came first) once', () => {
    const w = world(0);
    w.otherCommits();
    const own = w.ownCommits();
    w.signal();
    w.tail.publishOwn(own);
    expect(w.published).toEqual([[1, 2]]);
    w.tail.close();
  });
});
