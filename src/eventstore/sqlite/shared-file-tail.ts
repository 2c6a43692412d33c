/**
 * Several writer processes on one SQLite file (GATEWAY_PROCESSES): how the other processes' commits reach this
 * process's live subscribers. The file is read after the last position fed whenever SQLite's data_version says
 * another connection committed. That is checked when the WAL file changes (fs.watch on the folder: one inotify
 * watch, no polling), at most every `intervalMs`, and, as a safety net, every TAIL_CHECK_MS while someone is
 * subscribed (a PRAGMA that reads no table). docs/architecture.md, "Several processes".
 */
import { type FSWatcher, watch } from 'node:fs';
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
}

export class SharedFileTail {
  /** The last position handed to the live feed. */
  private last: number;
  private version: number;
  private watcher: FSWatcher | undefined;
  private readonly timer: NodeJS.Timeout;
  /** performance.now() of the last read of the file (intervalMs). */
  private readAt = Number.NEGATIVE_INFINITY;
  private intervalTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly deps: SharedFileTailDeps) {
    this.last = deps.head();
    this.version = deps.dataVersion();
    const wal = `${basename(deps.file)}-wal`;
    try {
      this.watcher = watch(dirname(deps.file), { persistent: false }, (_event, name) => {
        if (name === null || name === wal) this.noticeChange();
      });
      this.watcher.on('error', () => undefined);
    } catch {
      // No watch available: the timer alone notices changes.
    }
    this.timer = setInterval(() => {
      if (deps.feed.size > 0) this.poll(false);
    }, TAIL_CHECK_MS);
    this.timer.unref();
  }

  /** This process's own commits, once on disk: handed over as they are when they follow what was fed. */
  publishOwn(committed: StoredEvent[]): void {
    if (committed[0].position === this.last + 1) {
      this.last = committed[committed.length - 1].position;
      this.deps.feed.publish(committed);
    } else this.poll(true); // another process committed in between: read the file in order
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
    const wait = this.readAt + this.deps.intervalMs - performance.now();
    if (wait <= 0) return this.poll(false);
    this.intervalTimer = setTimeout(() => {
      this.intervalTimer = undefined;
      this.poll(false);
    }, wait);
  }

  /** Feeds the live subscribers everything after the last position fed (force: own commit left a gap). */
  private poll(force: boolean): void {
    if (this.closed) return;
    try {
      const version = this.deps.dataVersion();
      if (!force && version === this.version) return;
      this.readAt = performance.now();
      for (;;) {
        const page = this.deps.readAfter(this.last, READ_PAGE);
        if (page.length === 0) break;
        this.last = page[page.length - 1].position;
        this.deps.feed.publish(page);
      }
      // Only once read to the end: a read that failed leaves the version unseen, so the next tick reads again.
      this.version = version;
    } catch {
      // Busy or closing: the next signal or tick reads again from the last position fed.
    }
  }
}
