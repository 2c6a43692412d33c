/**
 * A full disk, told apart from other failures: ENOSPC, EDQUOT and SQLITE_FULL anywhere in an error's cause
 * chain (answered 507 insufficient_storage), and the disk's state /health reports: free space of DATA_DIR and
 * whether the last write failed. Nothing here retries; the first write that succeeds clears the flag, and
 * after a failure other than a full disk a report tries a small write of its own so that an idle gateway
 * recovers too (docs/operations.md, "Files and a full disk").
 */
import { statfs } from 'node:fs/promises';
import { StoreUnavailableError } from '../eventstore/event-store.js';

/** EFBIG: a file-size limit (RLIMIT_FSIZE) is a storage limit too. */
const DISK_FULL_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'SQLITE_FULL']);
/** How often a report may try its own write while the last write failed. */
const PROBE_EVERY_MS = 2_000;

export function isDiskFull(error: unknown): boolean {
  return anyCause(
    error,
    (cause, code) =>
      (code !== undefined && DISK_FULL_CODES.has(code)) ||
      /database or disk is full|no space left on device/i.test(cause.message),
  );
}

/**
 * SQLite failing to store rather than a statement being wrong: the disk full, an I/O error, a lock held
 * too long, no memory, a read-only or damaged file. Retrying later can succeed; skipping the work cannot.
 */
const STORAGE_FAILURE_CODES = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|NOMEM|READONLY|CORRUPT|CANTOPEN|NOTADB|PROTOCOL)(_|$)/;

export function isStorageFailure(error: unknown): boolean {
  return isDiskFull(error) || anyCause(error, (_cause, code) => code !== undefined && STORAGE_FAILURE_CODES.test(code));
}

/** Whether the error or one of its causes (`cause`, a few deep) passes the test; `code` is its string code, if any. */
function anyCause(error: unknown, test: (cause: Error, code: string | undefined) => boolean): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (test(current, typeof code === 'string' ? code : undefined)) return true;
  }
  return false;
}

export interface DiskReport {
  /** Bytes an unprivileged process may still write in DATA_DIR (undefined when it cannot be told). */
  freeBytes?: number;
  /** Below the configured minimum. */
  low: boolean;
  /** The last write failed (the disk full, or the store refusing to write), and none has succeeded since. */
  writeFailing: boolean;
}

export class StorageHealth {
  private failedAt: number | undefined;
  /** The last failure was for want of space. */
  private failedForSpace = false;
  private probedAt = 0;
  /** A small write through the store (a snapshot): its success clears the flag like any write's. */
  probeWrite: (() => Promise<void>) | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly minFreeBytes: number,
    /** Other writers that can tell whether they are failing (the read models' projection runner). */
    private readonly otherWritersFailing: () => boolean = () => false,
  ) {}

  /** Any write's outcome: a failure of the write path sets the flag (not a conflict), a success clears it. */
  noteWrite(error?: unknown): void {
    if (error === undefined) this.failedAt = undefined;
    else if (isDiskFull(error) || error instanceof StoreUnavailableError) {
      this.failedAt = Date.now();
      this.failedForSpace = isDiskFull(error);
    }
  }

  /**
   * Why writes fail now, as far as this process saw: `space` (the disk is full), `store` (the store refuses to
   * write), undefined while they succeed. The read models failing to write count too: while they do, what
   * they say (a session's state) is older than what the actors know. A write that succeeds in between, a small
   * one that still fits, does not make a full disk `store`: the last failure tells.
   */
  get writeFailure(): 'space' | 'store' | undefined {
    if (this.failedAt === undefined && !this.otherWritersFailing()) return undefined;
    return this.failedForSpace ? 'space' : 'store';
  }

  async report(): Promise<DiskReport> {
    if (
      this.failedAt !== undefined &&
      !this.failedForSpace &&
      this.probeWrite &&
      Date.now() - this.probedAt >= PROBE_EVERY_MS
    ) {
      this.probedAt = Date.now();
      await this.probeWrite().then(
        () => this.noteWrite(),
        () => undefined,
      );
    }
    let freeBytes: number | undefined;
    try {
      const stats = await statfs(this.dataDir);
      freeBytes = Number(stats.bavail) * Number(stats.bsize);
    } catch {
      freeBytes = undefined;
    }
    return {
      ...(freeBytes === undefined ? {} : { freeBytes }),
      low: freeBytes !== undefined && freeBytes < this.minFreeBytes,
      writeFailing: this.failedAt !== undefined || this.otherWritersFailing(),
    };
  }
}
