/**
 * Makes commits durable off the JavaScript thread: SQLite runs with synchronous=NORMAL, this flushes the WAL
 * with fdatasync on libuv's thread pool, and an append is answered once a flush that began after its commit
 * has ended. That is synchronous=FULL's promise without the flush blocking every request for its length
 * (docs/notes/performance.md). Flushes never overlap: one covers every commit made before it began.
 * docs/architecture.md, "When an append is durable".
 */
import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export class WalSync {
  private fd: number | undefined;
  private running = false;
  /** Commits done since the running flush began: the next flush answers them. */
  private waiting: Array<(error: Error | null) => void> = [];
  /** Flushes started (tests read it). */
  flushes = 0;
  /**
   * The first flush that failed. Linux may mark the pages of a failed fdatasync clean, so a later flush can
   * succeed without them; and WAL recovery stops at the first missing frame, taking every later commit with
   * it. Once one flush failed, none is trusted again: every later sync fails until the store is reopened.
   */
  private failed: Error | undefined;

  constructor(private readonly walFile: string) {}

  /** Resolves once everything committed before this call is on disk. */
  sync(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.waiting.push((error) => (error ? reject(error) : resolve()));
      if (!this.running) this.flush();
    });
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /**
   * Opened on first use: SQLite creates the WAL file with its first write. fsync flushes the file's pages
   * whichever descriptor wrote them, so a read-only one is enough. The WAL's name in its folder must be on
   * disk too, or a power cut could lose the whole file: SQLite syncs the folder only in a sync of its own,
   * which synchronous=NORMAL never makes of the WAL.
   */
  private open(): number {
    const fd = openSync(this.walFile, 'r');
    try {
      syncFolderOf(this.walFile);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return (this.fd = fd);
  }

  private flush(): void {
    const answered = this.waiting;
    this.waiting = [];
    let fd: number;
    try {
      fd = this.fd ?? this.open();
    } catch (error) {
      this.failed = error as Error;
      for (const answer of answered) answer(this.failed);
      return;
    }
    this.running = true;
    this.flushes += 1;
    fdatasync(fd, (flushError) => {
      this.running = false;
      const error = (this.failed ??= flushError ?? undefined) ?? null;
      for (const answer of answered) answer(error);
      if (this.waiting.length > 0) this.flush();
    });
  }
}

/** Once per store opened: a few milliseconds on the first commit. */
function syncFolderOf(file: string): void {
  const folder = openSync(dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}
