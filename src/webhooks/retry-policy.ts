/**
 * What one attempt's answer means for its delivery: delivered (any 2xx), retried later (on the schedule,
 * moved by jitter, or when the receiver's Retry-After says), or failed for good (410 Gone, or no retries
 * left). The schedule is WEBHOOK_RETRY_SCHEDULE: the delay before each retry, in order.
 */
import type { AttemptOutcome } from './delivery-events.js';

/** A Retry-After further out than this is read as this: a receiver cannot park a delivery for weeks. */
export const MAX_RETRY_AFTER_MS = 86_400_000;

export interface AttemptResult {
  delivered: boolean;
  /** HTTP status of the answer, when there was one. */
  status?: number;
  /** Why it did not succeed: a network error, a timeout, a refused destination, a non-2xx answer. */
  error?: string;
  durationMs: number;
  /** The receiver's Retry-After, in ms from now. */
  retryAfterMs?: number;
}

export interface RoundProgress {
  /** Attempts already made in this round, not counting this one. */
  roundAttempts: number;
  /** A one-attempt round (a retry requested for a finished delivery). */
  finalRound: boolean;
}

export interface Decision {
  outcome: AttemptOutcome;
  /** ms since the epoch; set when the outcome is `retrying`. */
  nextAttemptAt?: number;
}

export class RetryPolicy {
  constructor(
    private readonly schedule: readonly number[],
    /** 0.2 moves each delay randomly within ±20 %. */
    private readonly jitter: number,
    private readonly random: () => number = Math.random,
  ) {}

  decide(result: AttemptResult, progress: RoundProgress, now: number): Decision {
    if (result.delivered) return { outcome: 'delivered' };
    const delay = this.schedule[progress.roundAttempts];
    if (result.status === 410 || progress.finalRound || delay === undefined) return { outcome: 'failed' };
    const wait =
      result.retryAfterMs !== undefined ? Math.min(result.retryAfterMs, MAX_RETRY_AFTER_MS) : this.jittered(delay);
    return { outcome: 'retrying', nextAttemptAt: now + wait };
  }

  private jittered(delay: number): number {
    return Math.max(0, Math.round(delay * (1 + this.jitter * (2 * this.random() - 1))));
  }
}

/** Retry-After as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
