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

/** Addresses remembered as blocked before the expired ones are swept out. */
const SWEEP_AT = 10_000;

export function unauthenticatedLimit(perMinute: number, knowsAnyKey: (ctx: Context) => boolean): Middleware<RequestState> {
  const limiter = new RateLimiterMemory({ keyPrefix: 'unauthenticated', points: perMinute, duration: 60 });
  /**
   * Addresses over their allowance, until their window ends (what the limiter answered at the failure that
   * used it up). Kept here so that a request from an address in good standing, nearly every request, costs
   * one size check instead of an asynchronous look-up in the limiter.
   */
  const blocked = new Map<string, number>();
  return async (ctx, next) => {
    if (blocked.size > 0) {
      const address = ctx.ip || 'unknown';
      const until = blocked.get(address);
      const now = Date.now();
      if (until !== undefined && until <= now) blocked.delete(address);
      else if (until !== undefined && !knowsAnyKey(ctx)) {
        const seconds = Math.max(1, Math.ceil((until - now) / 1000));
        throw new Problem(429, 'rate_limited', `too many unauthenticated requests from this address; try again in ${seconds} s`, {
          headers: { 'Retry-After': String(seconds) },
        });
      }
    }
    try {
      await next();
    } catch (error) {
      if (problemOf(error)?.status === 401) {
        const address = ctx.ip || 'unknown';
        const used = await limiter.penalty(address, 1);
        if (used.consumedPoints >= perMinute) block(address, Date.now() + used.msBeforeNext);
      }
      throw error;
    }
  };

  function block(address: string, until: number): void {
    if (blocked.size >= SWEEP_AT) {
      const now = Date.now();
      for (const [other, end] of blocked) if (end <= now) blocked.delete(other);
    }
    blocked.set(address, until);
  }
}
