/**
 * A per-address allowance of requests that fail authentication (401): beyond it, the address gets
 * `429 rate_limited` with Retry-After before its keys are even looked at, so guessing keys or flooding
 * the key check from one address stays slow. Requests with a valid key never count.
 * Counted in memory with rate-limiter-flexible (one process serves the API).
 */
import type { Middleware } from 'koa';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { Problem } from '../problem.js';
import type { RequestState } from './request-id.js';

export function unauthenticatedLimit(perMinute: number): Middleware<RequestState> {
  const limiter = new RateLimiterMemory({ keyPrefix: 'unauthenticated', points: perMinute, duration: 60 });
  return async (ctx, next) => {
    const address = ctx.ip || 'unknown';
    const used = await limiter.get(address);
    if (used && used.consumedPoints >= perMinute) {
      const seconds = Math.max(1, Math.ceil(used.msBeforeNext / 1000));
      throw new Problem(429, 'rate_limited', `too many unauthenticated requests from this address; try again in ${seconds} s`, {
        headers: { 'Retry-After': String(seconds) },
      });
    }
    try {
      await next();
    } catch (error) {
      if (error instanceof Problem && error.status === 401) await limiter.penalty(address, 1);
      throw error;
    }
  };
}
