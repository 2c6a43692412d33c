/**
 * Several writer processes on one SQLite file (GATEWAY_PROCESSES): how the other processes' commits reach this
 * process's live subscribers. The file is read after the last position fed whenever SQLite's data_version says
 * another connection committed. That is checked when the WAL file changes (fs.watch on it: one inotify
 * watch, no polling), at most every `intervalMs`, and, as a safety net, every TAIL_CHECK_MS while someone is
 * subscribed (a PRAGMA that reads no table). docs/architecture.md, "Several processes".
 */
import { type FSWatcher, existsSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { StoredEvent } from '../event-store.js';
import type { LiveFeed } from './live-feed.js';

const READ_PAGE = 1_000;
/** While subscribed, the file is also checked this often, in case a change signal was missed. */
const TAIL_CHECK_MS = 200;

export interface SharedFileTailDeps {
  file: string;
  feed: LiveFeed;
  /** SqliteStoreOptions.tailIntervalMs: the file is read at most this often on change signals. */
  intervalMs: number;
  /** The log's last position now. */
  head(): number;
  /** PRAGMA data_version: changes when another connection commits. */
  dataVersion(): number;
  /** Events after a position, in order (throws once the store is closed). */
  readAfter(after: number, maxCount: number): StoredEvent[];
  /** Tests: the change signal (default: a watch of the `-wal` file) and the clock of the interval (performance.now). */
  watch?: (file: string, changed: () => void) => { close(): void } | undefined;
  now?: () => number;
}

/**
 * The WAL file itself is watched, not the folder: a folder watch also wakes every process for each write to the
 * read-model file's WAL and for each checkpoint, thousands of times a second under load (each inotify event is a
 * turn of every process's event loop, and a cost to the writer per watcher): on 16 cores with 8 processes that
 * was most of the machine projector's time (issue 30, docs/architecture.md "Several processes"). The WAL exists
 * while this process has the file open (SQLite deletes it only when the last connection closes); where it
 * cannot be watched, the folder is, filtered by name.
 */
function watchWal(file: string, changed: () => void): FSWatcher | undefined {
  const wal = `${file}-wal`;
  const options = { persistent: false };
  try {
    const watcher = existsSync(wal)
      ? watch(wal, options, changed)
      : watch(dirname(file), options, (_event, name) => {
          if (name === null || name === basename(wal)) changed();
        });
    watcher.on('error', () => undefined);
    return watcher;
  } catch {
    return undefined; // no watch available: the timer alone notices changes
  }
}

export class SharedFileTail {
  /** The last position handed to the live feed. */
  private last: number;
  private version: number;
  private watcher: { close(): void } | undefined;
  private readonly timer: NodeJS.Timeout;
  /** now() of the last read of the file (intervalMs). */
  private readAt = Number.NEGATIVE_INFINITY;
  private intervalTimer: NodeJS.Timeout | undefined;
  /** An own commit came after others' not read yet: the next check reads, whatever data_version says. */
  private gap = false;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly deps: SharedFileTailDeps) {
    this.now = deps.now ?? (() => performance.now());
    this.last = deps.head();
    this.version = deps.dataVersion();
    this.watcher = (deps.watch ?? watchWal)(deps.file, () => this.noticeChange());
    this.timer = setInterval(() => {
      if (deps.feed.size > 0) this.poll();
    }, TAIL_CHECK_MS);
    this.timer.unref();
  }

  /**
   * This process's own commits, once on disk: handed over as they are when they follow what was fed. When another
   * process committed in between, they are read from the file in order with its commits, at the next check (within
   * `intervalMs`): reading at once made a read of the file per own commit with several busy writers.
   */
  publishOwn(committed: StoredEvent[]): void {
    if (committed[0].position === this.last + 1) {
      this.last = committed[committed.length - 1].position;
      this.deps.feed.publish(committed);
    } else if (committed[committed.length - 1].position > this.last) {
      this.gap = true;
      this.noticeChange();
    }
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    clearInterval(this.timer);
    clearTimeout(this.intervalTimer);
  }

  /**
   * The file changed: read it now, or, when it was read less than `intervalMs` ago, once that interval is up, so
   * that under load the commits of several processes are read (and projected) together, while a lone change is
   * read at once.
   */
  private noticeChange(): void {
    if (this.closed || this.intervalTimer) return;
    const wait = this.readAt + this.deps.intervalMs - this.now();
    if (wait <= 0) return this.poll();
    this.intervalTimer = setTimeout(() => {
      this.intervalTimer = undefined;
      this.poll();
    }, wait);
  }

  /** Feeds the live subscribers everything after the last position fed, when there is something new. */
  private poll(): void {
    if (this.closed) return;
    try {
      const version = this.deps.dataVersion();
      if (!this.gap && version === this.version) return;
      this.readAt = this.now();
      for (;;) {
        const page = this.deps.readAfter(this.last, READ_PAGE);
        if (page.length === 0) break;
        this.last = page[page.length - 1].position;
        this.deps.feed.publish(page);
      }
      // Only once read to the end: a read that failed leaves the version unseen, so the next tick reads again.
      this.version = version;
      this.gap = false;
    } catch {
      // Busy or closing: the next signal or tick reads again from the last position fed.
    }
  }
}
