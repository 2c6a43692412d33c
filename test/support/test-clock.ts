/**
 * A Clock (src/time/clock.ts) that a test moves on: `advance(ms)` fires the timers due within `ms`, in the
 * order they are due, each with the time set to its due time, so a test waits for no real time to pass.
 *
 * Stopped (the default), time moves only when advanced: a timer never fires by itself, so "nothing happened"
 * holds for certain until the test moves time past it. Running (`{ running: true }`), time also passes as the
 * system clock's does and timers fire when due: for a gateway in the test's process, whose event store stamps
 * events with the system time (a webhook delivery is due at its event's time), while the test still skips
 * ahead with `advance`.
 */
import type { Clock, ClockTimer } from '../../src/time/clock.js';

interface Scheduled extends ClockTimer {
  dueAt: number;
  /** Set for an interval: it is due again this much later each time it fires. */
  everyMs: number | undefined;
  callback: () => void;
  /** Running: the system timer that fires it when it is due without an advance. */
  real: NodeJS.Timeout | undefined;
  unreffed: boolean;
  /** Order of setting: timers due at the same time fire in the order they were set. */
  seq: number;
}

export class TestClock implements Clock {
  private readonly timers = new Set<Scheduled>();
  private readonly running: boolean;
  /** Stopped: the time. Running: what the system clock is behind this clock. */
  private time: number;
  private seq = 0;

  constructor(options: { start?: number; running?: boolean } = {}) {
    this.running = options.running ?? false;
    this.time = this.running ? 0 : (options.start ?? Date.now());
    if (this.running && options.start !== undefined) this.time = options.start - Date.now();
  }

  now(): number {
    return this.running ? Date.now() + this.time : this.time;
  }

  setTimeout(callback: () => void, ms: number): ClockTimer {
    return this.schedule(callback, ms, undefined);
  }

  setInterval(callback: () => void, ms: number): ClockTimer {
    return this.schedule(callback, ms, Math.max(1, ms));
  }

  clear(timer: ClockTimer | undefined): void {
    const scheduled = timer as Scheduled | undefined;
    if (!scheduled || !this.timers.delete(scheduled)) return;
    clearTimeout(scheduled.real);
  }

  /** When the timers set and not yet fired are due, soonest first. */
  pending(): number[] {
    return [...this.timers].map((t) => t.dueAt).sort((a, b) => a - b);
  }

  /**
   * Moves time on by `ms`, firing every timer due by then in order (an interval as often as it falls due);
   * after each, what its callback started runs until it waits for I/O or a timer.
   */
  async advance(ms: number): Promise<void> {
    if (ms < 0) throw new Error('time only moves forward');
    const until = this.now() + ms;
    for (;;) {
      const next = this.soonest();
      if (!next || next.dueAt > until) break;
      this.moveTo(next.dueAt);
      this.fire(next);
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.moveTo(until);
    // Running: what is still to come is due sooner now.
    for (const timer of this.timers) this.arm(timer);
  }

  private schedule(callback: () => void, ms: number, everyMs: number | undefined): ClockTimer {
    const timer: Scheduled = {
      dueAt: this.now() + Math.max(0, ms),
      everyMs,
      callback,
      real: undefined,
      unreffed: false,
      seq: this.seq++,
      unref: () => {
        timer.unreffed = true;
        timer.real?.unref();
        return timer;
      },
    };
    this.timers.add(timer);
    this.arm(timer);
    return timer;
  }

  /** Running: a system timer fires it when its time comes without an advance. */
  private arm(timer: Scheduled): void {
    if (!this.running) return;
    clearTimeout(timer.real);
    timer.real = setTimeout(() => this.timers.has(timer) && this.fire(timer), Math.max(0, timer.dueAt - this.now()));
    if (timer.unreffed) timer.real.unref();
  }

  private fire(timer: Scheduled): void {
    if (timer.everyMs === undefined) this.clear(timer);
    else {
      timer.dueAt += timer.everyMs;
      this.arm(timer);
    }
    timer.callback();
  }

  private soonest(): Scheduled | undefined {
    let soonest: Scheduled | undefined;
    for (const timer of this.timers)
      if (!soonest || timer.dueAt < soonest.dueAt || (timer.dueAt === soonest.dueAt && timer.seq < soonest.seq))
        soonest = timer;
    return soonest;
  }

  /** Never backwards: a running clock may be past a timer's due time already. */
  private moveTo(at: number): void {
    if (at <= this.now()) return;
    if (this.running) this.time = at - Date.now();
    else this.time = at;
  }
}
