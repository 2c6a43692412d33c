/**
 * The one timer race: a promise against a timeout on a Clock. Answers TIMED_OUT instead of throwing, so that the
 * caller says what a timeout means there (an error, a late answer, a cap) and the timer is always cleared.
 */
import { type Clock, type ClockTimer, systemClock } from './clock.js';

export const TIMED_OUT: unique symbol = Symbol('timed out');
export type TimedOut = typeof TIMED_OUT;

/** `promise`'s value, or TIMED_OUT when `ms` pass on `clock` first; a rejection of `promise` rejects. */
export async function raceTimeout<T>(
  promise: Promise<T>,
  ms: number,
  clock: Clock = systemClock,
): Promise<T | TimedOut> {
  let timer: ClockTimer | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<TimedOut>((resolve) => {
        timer = clock.setTimeout(() => resolve(TIMED_OUT), ms);
      }),
    ]);
  } finally {
    clock.clear(timer);
  }
}
