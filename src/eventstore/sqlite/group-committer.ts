/**
 * Group commit: requests submitted during one turn of the event loop are handed to `commit` together,
 * so one fsync covers all of them. Durable throughput then grows with concurrency instead of being
 * capped by the disk's flush rate. `commit` answers one result or Error per request, in order, or
 * RETRY_LATER when it could not start (another process holds the file's write lock): the batch is tried
 * again a moment later, with whatever was submitted meanwhile, and the event loop runs in between.
 */
export const RETRY_LATER = Symbol('retry later');

/** How long a refused commit waits before it tries again (ms; timers go no lower than 1). */
const RETRY_DELAY_MS = 1;

export class GroupCommitter<Request, Result> {
  private queue: Array<{ request: Request; resolve: (r: Result) => void; reject: (e: Error) => void }> = [];
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(
    private readonly commit: (batch: readonly Request[]) => Array<Result | Error> | typeof RETRY_LATER,
    private readonly maxBatch = 2_000,
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

  /** Resolves once everything submitted so far is committed. */
  drain(): Promise<void> {
    if (!this.scheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private flush(): void {
    const batch = this.queue.splice(0, this.maxBatch);
    const outcomes = this.commit(batch.map((b) => b.request));
    if (outcomes === RETRY_LATER) {
      this.queue.unshift(...batch);
      setTimeout(() => this.flush(), RETRY_DELAY_MS);
      return;
    }
    batch.forEach((waiter, i) => {
      const outcome = outcomes[i]!;
      if (outcome instanceof Error) waiter.reject(outcome);
      else waiter.resolve(outcome);
    });
    if (this.queue.length > 0) {
      setImmediate(() => this.flush());
      return;
    }
    this.scheduled = false;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
