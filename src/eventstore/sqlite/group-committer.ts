/**
 * Group commit: requests submitted during one turn of the event loop are handed to `commit` together, so one
 * fsync covers them all and durable throughput grows with concurrency. `commit` answers a result or Error per
 * request, in order, or BUSY (another process holds the write lock): the batch is tried again after a short
 * jittered pause, off the event loop, until `busy.deadlineMs` (docs/architecture.md, "Several processes").
 * With `durable`, a batch is answered once on disk (WalSync) while the next one commits.
 */
export const BUSY = Symbol('busy');

export interface BusyRetry {
  deadlineMs: number;
  error: () => Error;
}

interface Queued<Request, Result> {
  request: Request;
  resolve: (r: Result) => void;
  reject: (e: Error) => void;
  /** When its first commit found the file busy. */
  busySince?: number;
}

/**
 * Pauses after BUSY: another process holds the write lock only for its commit (a fraction of a millisecond,
 * the flush to disk happens after it lets go), so the first tries come soon; the pause doubles with each
 * BUSY in a row up to the maximum. The maximum was 20 ms: with eight processes a commit met BUSY several times
 * in a row, and each request's answer waited that long while the lock was free again (the 202s of bench
 * `scale` took 18 ms at 64 connections with half the CPU idle, issue 30). A try that fails costs a few
 * microseconds.
 */
const BUSY_PAUSE_MIN_MS = 1;
const BUSY_PAUSE_MAX_MS = 4;

export class GroupCommitter<Request, Result> {
  private queue: Array<Queued<Request, Result>> = [];
  private scheduled = false;
  private idle: Array<() => void> = [];
  private busyStreak = 0;
  /** Committed batches whose durability is awaited. */
  private syncing = 0;

  constructor(
    private readonly commit: (batch: readonly Request[]) => Array<Result | Error> | typeof BUSY,
    private readonly maxBatch = 2_000,
    private readonly busy: BusyRetry = { deadlineMs: 5_000, error: () => new Error('the store is busy') },
    private readonly durable?: () => Promise<void>,
  ) {}

  submit(request: Request): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // setImmediate runs after the pending I/O callbacks and microtasks, which is where concurrent callers queue up.
        setImmediate(() => this.flush());
      }
    });
  }

  /** Resolves once everything submitted so far is committed (and durable). */
  drain(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private isIdle(): boolean {
    return !this.scheduled && this.queue.length === 0 && this.syncing === 0;
  }

  private settleIdle(): void {
    if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve();
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch);
    const outcomes = this.commit(batch.map((b) => b.request));
    if (outcomes === BUSY) {
      this.retryBusy(batch);
      return;
    }
    this.busyStreak = 0;
    const answer = (failure?: Error) =>
      batch.forEach((waiter, i) => {
        const outcome = failure ?? outcomes[i];
        if (outcome instanceof Error) waiter.reject(outcome);
        else waiter.resolve(outcome);
      });
    if (this.durable) {
      this.syncing += 1;
      this.durable()
        .then(
          () => answer(),
          (error: unknown) => answer(error instanceof Error ? error : new Error(String(error))),
        )
        .finally(() => {
          this.syncing -= 1;
          this.settleIdle();
        });
    } else answer();
    if (this.queue.length > 0) {
      setImmediate(() => this.flush());
      return;
    }
    this.scheduled = false;
    this.settleIdle();
  }

  /** The batch goes back to the front of the queue (what arrives meanwhile joins it) and is tried again later. */
  private retryBusy(batch: Array<Queued<Request, Result>>): void {
    const now = Date.now();
    const again: Array<Queued<Request, Result>> = [];
    let error: Error | undefined;
    for (const waiter of batch) {
      waiter.busySince ??= now;
      if (now - waiter.busySince < this.busy.deadlineMs) again.push(waiter);
      else waiter.reject((error ??= this.busy.error()));
    }
    this.queue.unshift(...again);
    if (this.queue.length === 0) {
      this.scheduled = false;
      this.settleIdle();
      return;
    }
    this.busyStreak += 1;
    const pause =
      Math.min(BUSY_PAUSE_MAX_MS, BUSY_PAUSE_MIN_MS * 2 ** Math.min(this.busyStreak - 1, 10)) *
      (0.5 + Math.random() / 2);
    setTimeout(() => this.flush(), pause);
  }
}
