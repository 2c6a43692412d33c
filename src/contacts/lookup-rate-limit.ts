/**
 * How many fresh number checks and avatar lookups a device may make (one allowance for both): `perMinute`
 * in a minute and `burst` back to back, since bulk number checks are a known cause of WhatsApp bans; cached
 * answers do not count (docs/api-guide.md, "Contacts"). In memory (rate-limiter-flexible, whose wait becomes
 * Retry-After) is enough: a device's lookups go through its live connection, which one process holds, and a
 * restart costs at most one extra burst while answers stay cached (LookupCache).
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
