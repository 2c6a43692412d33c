/**
 * A per-address allowance of requests that fail authentication (401): beyond it, every request from that
 * address without a known key gets `429 rate_limited` with Retry-After at once, before its body is read,
 * so flooding or guessing keys from one address stays cheap for the gateway. Requests with a valid key
 * neither count nor are refused. Counted in memory with rate-limiter-flexible (one process serves the API).
 */
import type { Context, Middleware } from 'koa';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { problemOf } from '../error-table.js';
import { Problem } from '../problem.js';
import type { RequestState } from './request-id.js';

export function unauthenticatedLimit(perMinute: number, knowsAnyKey: (ctx: Context) => boolean): Middleware<RequestState> {
  const limiter = new RateLimiterMemory({ keyPrefix: 'unauthenticated', points: perMinute, duration: 60 });
  return async (ctx, next) => {
    const address = ctx.ip || 'unknown';
    const used = await limiter.get(address);
    if (used && used.consumedPoints >= perMinute && !knowsAnyKey(ctx)) {
      const seconds = Math.max(1, Math.ceil(used.msBeforeNext / 1000));
      throw new Problem(429, 'rate_limited', `too many unauthenticated requests from this address; try again in ${seconds} s`, {
        headers: { 'Retry-After': String(seconds) },
      });
    }
    try {
      await next();
    } catch (error) {
      if (problemOf(error)?.status === 401) await limiter.penalty(address, 1);
      throw error;
    }
  };
}
