/**
 * Where time passes (retention, outbox expiry, webhook retries, leases, the read models' wait), code reads the
 * time and sets its timers through a Clock, so that a test can move time on instead of waiting for it
 * (test/support/test-clock.ts). Production uses the system clock: the same Date.now and timers as before.
 */

/** A timer set through a Clock; `unref` keeps it from holding the process open, as Node's timers do. */
export interface ClockTimer {
  unref(): ClockTimer;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, ms: number): ClockTimer;
  setInterval(callback: () => void, ms: number): ClockTimer;
  /** Clears a timer or an interval set through this clock; undefined is ignored. */
  clear(timer: ClockTimer | undefined): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  setInterval: (callback, ms) => setInterval(callback, ms),
  // Node's clearTimeout clears intervals too.
  clear: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
};

/** Resolves once `ms` have passed on `clock`. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
