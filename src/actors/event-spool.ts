/**
 * A device's retry spool for what its engine reports (inbound messages, receipts, contacts): written in
 * arrival order, one at a time, and a write the store refuses is kept and retried with backoff until taken,
 * so nothing the network was already told we have is dropped. While its head cannot be written the spool is
 * `blocked` and the actor stops its intake; a full spool makes a report wait for room (docs/architecture.md,
 * "When the store cannot write"). `retry: false`: a sender still waits for the answer, and is told instead.
 */
import { DomainError } from '../errors/domain-error.js';
import { StoreUnavailableError } from '../eventstore/event-store.js';

export interface SpoolSettings {
  /** Reports held at most (queued or being written); more wait for room. */
  capacity: number;
  /** First retry delay; doubles up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Tries of a report that fails for another reason than the store (a bug, not an outage) before it is given up. */
  maxOtherFailures: number;
}

export const DEFAULT_SPOOL_SETTINGS: SpoolSettings = {
  capacity: 10_000,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
  maxOtherFailures: 5,
};

export interface SpoolEvents {
  /** The head could not be written: stop taking more from the network. */
  blocked(error: unknown): void;
  /** Everything held was written after a block. */
  drained(): void;
  /** A report failed for a reason retrying cannot fix (not the store's availability) and was given up. */
  givenUp(what: string, error: unknown): void;
}

export class SpoolClosedError extends DomainError {
  constructor(deviceId: string) {
    super(
      'shutting_down',
      `the reports of device ${deviceId} can no longer be recorded: the gateway is stopping or the device was deleted`,
    );
  }
}

interface Entry {
  what: string;
  write: () => Promise<void>;
  retry: boolean;
  failures: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Failures that go away by themselves (the store is down, the disk is full, the store is busy). */
export function isTransientStoreFailure(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  if (error instanceof DomainError) return error.code === 'insufficient_storage' || error.code === 'busy';
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^(ENOSPC|EDQUOT|EIO|EBUSY|EAGAIN|SQLITE_(FULL|BUSY|LOCKED|IOERR.*))$/.test(code);
}

export class EventSpool {
  private readonly entries: Entry[] = [];
  private readonly roomWaiters: Array<() => void> = [];
  private running = false;
  private blockedBy: unknown;
  private timer: NodeJS.Timeout | undefined;
  private wakeRetry: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly deviceId: string,
    private readonly events: SpoolEvents,
    private readonly settings: SpoolSettings = DEFAULT_SPOOL_SETTINGS,
  ) {}

  /** Reports held now (queued or being written). */
  get size(): number {
    return this.entries.length;
  }

  /** True while the head cannot be written. */
  get blocked(): boolean {
    return this.blockedBy !== undefined;
  }

  /**
   * Resolves once the report is durable. With `retry` (the default) it is kept until the store takes it;
   * without, a failure rejects at once and nothing is kept (and while the spool is blocked, it is refused
   * without a try, with the error that blocks it).
   */
  async write(what: string, write: () => Promise<void>, options: { retry?: boolean } = {}): Promise<void> {
    const retry = options.retry !== false;
    if (this.closed) throw new SpoolClosedError(this.deviceId);
    if (!retry && this.blockedBy !== undefined) throw this.blockedBy;
    while (this.entries.length >= this.settings.capacity) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      if (this.closed) throw new SpoolClosedError(this.deviceId);
    }
    return new Promise<void>((resolve, reject) => {
      this.entries.push({ what, write, retry, failures: 0, resolve, reject });
      if (!this.running) void this.run();
    });
  }

  /** Tries the head again now instead of at the end of its backoff (e.g. the store said it is back). */
  retryNow(): void {
    this.wakeRetry?.();
  }

  /** Stops writing; what is still held is refused (and logged by the caller). Answers what was lost. */
  close(): Array<{ what: string }> {
    this.closed = true;
    this.wakeRetry?.();
    const lost = this.entries.splice(0);
    for (const entry of lost) entry.reject(new SpoolClosedError(this.deviceId));
    for (const wake of this.roomWaiters.splice(0)) wake();
    return lost.map(({ what }) => ({ what }));
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (!this.closed && this.entries.length > 0) {
        const entry = this.entries[0];
        try {
          await entry.write();
          this.shift(entry);
          entry.resolve();
          continue;
        } catch (error) {
          if (this.closed) return;
          entry.failures += 1;
          const transient = isTransientStoreFailure(error);
          if (!entry.retry || (!transient && entry.failures >= this.settings.maxOtherFailures)) {
            this.shift(entry);
            entry.reject(error);
            if (entry.retry) this.events.givenUp(entry.what, error);
            continue;
          }
          if (this.blockedBy === undefined) {
            this.blockedBy = error;
            this.events.blocked(error);
          } else this.blockedBy = error;
          await this.backoff(entry.failures);
        }
      }
    } finally {
      this.running = false;
    }
    if (!this.closed && this.blockedBy !== undefined && this.entries.length === 0) {
      this.blockedBy = undefined;
      this.events.drained();
    }
  }

  private shift(entry: Entry): void {
    if (this.entries[0] === entry) this.entries.shift();
    this.roomWaiters.shift()?.();
  }

  private backoff(failures: number): Promise<void> {
    const { baseDelayMs, maxDelayMs } = this.settings;
    const nominal = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(30, failures - 1));
    // ±20 % jitter: devices that share a store do not all knock at once when it comes back.
    const delay = Math.round(nominal * (0.8 + 0.4 * Math.random()));
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.wakeRetry = undefined;
        resolve();
      };
      this.wakeRetry = done;
      this.timer = setTimeout(done, delay);
      this.timer.unref();
    });
  }
}
