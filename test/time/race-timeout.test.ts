import { describe, expect, it } from 'vitest';
import { TIMED_OUT, raceTimeout } from '../../src/time/race-timeout.js';
import { TestClock } from '../support/test-clock.js';

describe('raceTimeout', () => {
  it("answers the promise's value when it settles first, and clears its timer", async () => {
    const clock = new TestClock();
    expect(await raceTimeout(Promise.resolve(7), 1_000, clock)).toBe(7);
    expect(clock.pending()).toEqual([]);
  });

  it('answers TIMED_OUT once the time passes on the clock first', async () => {
    const clock = new TestClock();
    const raced = raceTimeout(new Promise<number>(() => undefined), 1_000, clock);
    await clock.advance(1_000);
    expect(await raced).toBe(TIMED_OUT);
  });

  it("rejects with the promise's error, and clears its timer", async () => {
    const clock = new TestClock();
    await expect(raceTimeout(Promise.reject(new Error('boom')), 1_000, clock)).rejects.toThrow('boom');
    expect(clock.pending()).toEqual([]);
  });
});
