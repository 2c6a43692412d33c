import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, RetryPolicy, parseRetryAfter } from '../../src/webhooks/retry-policy.js';
import { loadConfig } from '../../src/config.js';

const NOW = 1_700_000_000_000;
const failedWith = (status?: number, retryAfterMs?: number) => ({
  delivered: false,
  status,
  durationMs: 1,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});
const round = (roundAttempts: number, finalRound = false) => ({ roundAttempts, finalRound });

describe('retry policy', () => {
  const schedule = loadConfig({}).webhooks.retrySchedule;

  it('has the documented schedule by default: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h, 6 h, 12 h', () => {
    expect(schedule).toEqual([
      5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000,
    ]);
    expect(loadConfig({}).webhooks.retryJitter).toBe(0.2);
  });

  it('follows the schedule, then fails for good', () => {
    const policy = new RetryPolicy(schedule, 0);
    schedule.forEach((delay, i) => {
      expect(policy.decide(failedWith(500), round(i), NOW)).toEqual({
        outcome: 'retrying',
        nextAttemptAt: NOW + delay,
      });
    });
    expect(policy.decide(failedWith(500), round(schedule.length), NOW)).toEqual({ outcome: 'failed' });
  });

  it('moves each delay by at most the jitter, both ways', () => {
    expect(new RetryPolicy([10_000], 0.2, () => 0).decide(failedWith(500), round(0), NOW).nextAttemptAt).toBe(
      NOW + 8_000,
    );
    expect(new RetryPolicy([10_000], 0.2, () => 0.999_999).decide(failedWith(500), round(0), NOW).nextAttemptAt).toBe(
      NOW + 12_000,
    );
    const policy = new RetryPolicy([10_000], 0.2);
    for (let i = 0; i < 200; i++) {
      const wait = policy.decide(failedWith(), round(0), NOW).nextAttemptAt! - NOW;
      expect(wait).toBeGreaterThanOrEqual(8_000);
      expect(wait).toBeLessThanOrEqual(12_000);
    }
  });

  it('is delivered on any 2xx', () => {
    expect(
      new RetryPolicy(schedule, 0.2).decide({ delivered: true, status: 204, durationMs: 3 }, round(0), NOW),
    ).toEqual({ outcome: 'delivered' });
  });

  it('stops on 410 Gone and after the one attempt of a requested retry', () => {
    const policy = new RetryPolicy(schedule, 0.2);
    expect(policy.decide(failedWith(410), round(0), NOW)).toEqual({ outcome: 'failed' });
    expect(policy.decide(failedWith(500), round(0, true), NOW)).toEqual({ outcome: 'failed' });
  });

  it('honours Retry-After over the schedule, up to a day', () => {
    const policy = new RetryPolicy([5_000], 0.2);
    expect(policy.decide(failedWith(429, 60_000), round(0), NOW)).toEqual({
      outcome: 'retrying',
      nextAttemptAt: NOW + 60_000,
    });
    expect(policy.decide(failedWith(503, 30 * 86_400_000), round(0), NOW)).toEqual({
      outcome: 'retrying',
      nextAttemptAt: NOW + MAX_RETRY_AFTER_MS,
    });
    // …but not beyond the number of attempts.
    expect(policy.decide(failedWith(503, 1_000), round(1), NOW)).toEqual({ outcome: 'failed' });
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), NOW)).toBe(90_000);
    expect(parseRetryAfter(new Date(NOW - 90_000).toUTCString(), NOW)).toBe(0);
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });
});
