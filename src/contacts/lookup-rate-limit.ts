/**
 * How many fresh number checks and avatar lookups a device may make (one allowance for both): at most `perMinute` in a minute, and at most `burst`
 * back to back (in the time the steady rate takes to earn a burst: 10 at 30 a minute = 20 s). Bulk
 * number checks are a known cause of WhatsApp bans; answers from the cache do not count.
 *
 * Counted with rate-limiter-flexible's in-memory limiters (a maintained, widely used implementation of
 * keyed windows that tells how long until the next point, which becomes Retry-After). In memory is
 * enough: a device's lookups go through its live connection, which only one process holds, and a
 * restart (which reconnects the session first) costs at most one extra burst, while the answers
 * already given stay cached across it (LookupCache).
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { DomainError } from '../errors/domain-error.js';

export interface LookupRateSettings {
  perMinute: number;
  /** 1..perMinute */
  burst: number;
}

export class LookupRateLimitedError extends DomainError {
  constructor(retryAfterSeconds: number) {
    super('rate_limited', `too many fresh lookups (number checks and avatars); try again in ${retryAfterSeconds} s`, {
      retryAfterSeconds,
    });
  }
}

export class LookupRateLimit {
  private readonly burst: RateLimiterMemory;
  private readonly minute: RateLimiterMemory;

  constructor(settings: LookupRateSettings) {
    this.minute = new RateLimiterMemory({
      keyPrefix: 'contact-check-minute',
      points: settings.perMinute,
      duration: 60,
    });
    this.burst = new RateLimiterMemory({
      keyPrefix: 'contact-check-burst',
      points: settings.burst,
      duration: (60 * settings.burst) / settings.perMinute,
    });
  }

  /** Takes one fresh lookup from the device's allowance, or throws LookupRateLimitedError when none is left. */
  async take(deviceId: string): Promise<void> {
    try {
      await this.burst.consume(deviceId);
    } catch (refusal) {
      throw limited(refusal);
    }
    try {
      await this.minute.consume(deviceId);
    } catch (refusal) {
      // No lookup happens: the burst point goes back.
      await this.burst.reward(deviceId);
      throw limited(refusal);
    }
  }
}

function limited(refusal: unknown): unknown {
  if (!(refusal instanceof RateLimiterRes)) return refusal;
  return new LookupRateLimitedError(Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)));
}
