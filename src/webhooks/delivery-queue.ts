/**
 * Where attempts wait for their turn: a start rate per destination host (host:port) in front of a cap on
 * attempts in flight over all devices, both first come, first served. A device has at most one attempt waiting
 * or in flight, so a slow receiver holds one slot. A small scheduler of its own rather than two p-queues: an
 * attempt that finds room starts in the same turn, with no per-attempt promise and timer bookkeeping.
 */

export interface DeliveryQueueOptions {
  concurrency: number;
  hostRatePerSecond: number;
}

/** Host windows idle this long are dropped (their rate window has long passed). */
const IDLE_HOST_SWEEP_MS = 60_000;

export class DeliveryQueue {
  private readonly hosts = new Map<string, HostWindow>();
  private readonly sweeper: NodeJS.Timeout;
  private active = 0;
  /** Attempts admitted by their host, waiting for a slot (FIFO). */
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: DeliveryQueueOptions) {
    this.sweeper = setInterval(() => this.sweepIdleHosts(), IDLE_HOST_SWEEP_MS).unref();
  }

  /** Runs `task` once the host's rate and the global concurrency allow it. */
  run<T>(host: string, task: () => Promise<T>): Promise<T> {
    let window = this.hosts.get(host);
    if (!window) {
      window = HostWindow.forRate(this.options.hostRatePerSecond);
      this.hosts.set(host, window);
    }
    if (window.admitNow()) return this.start(task);
    return new Promise<void>((resolve) => window.wait(resolve)).then(() => this.start(task));
  }

  close(): void {
    clearInterval(this.sweeper);
    for (const window of this.hosts.values()) window.close();
  }

  private start<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.options.concurrency) {
      this.active++;
      return this.execute(task);
    }
    // release() hands its slot over: `active` stays as it is.
    return new Promise<void>((resolve) => this.waiting.push(resolve)).then(() => this.execute(task));
  }

  private async execute<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  private sweepIdleHosts(): void {
    for (const [host, window] of this.hosts) if (window.idle()) this.hosts.delete(host);
  }
}

/** At most `cap` starts per `intervalMs` window for one host; the rest wait, in order, for the next windows. */
class HostWindow {
  private windowStart = 0;
  private started = 0;
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly intervalMs: number,
    private readonly cap: number,
  ) {}

  /**
   * Spread over the second in windows of about a tenth, so that a second's allowance does not leave in one
   * burst; each window is as long as its starts are worth (15/s: 2 every 133 ms), so rates that are not
   * multiples of ten are kept too.
   */
  static forRate(perSecond: number): HostWindow {
    const cap = perSecond >= 10 ? Math.ceil(perSecond / 10) : perSecond;
    return new HostWindow((1_000 * cap) / perSecond, cap);
  }

  /** Takes a start in the current window when nobody waits before it and the window has room. */
  admitNow(): boolean {
    return this.waiting.length === 0 && this.admit();
  }

  wait(admitted: () => void): void {
    this.waiting.push(admitted);
    if (!this.timer) this.release();
  }

  idle(): boolean {
    return this.waiting.length === 0 && !this.timer && Date.now() - this.windowStart >= this.intervalMs;
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private admit(): boolean {
    const now = Date.now();
    if (now - this.windowStart >= this.intervalMs) {
      this.windowStart = now;
      this.started = 0;
    }
    if (this.started >= this.cap) return false;
    this.started++;
    return true;
  }

  /** Lets waiters start while the window has room, then waits for the next window. */
  private release(): void {
    this.timer = undefined;
    while (this.waiting.length > 0 && this.admit()) this.waiting.shift()!();
    if (this.waiting.length > 0)
      this.timer = setTimeout(() => this.release(), Math.max(1, this.windowStart + this.intervalMs - Date.now()));
  }
}
