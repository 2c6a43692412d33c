/**
 * A per-address allowance of failed authentications (UNAUTHENTICATED_RATE_PER_MINUTE; what counts:
 * docs/configuration.md, "HTTP limits"): beyond it, a request from that address that does not authenticate
 * for its route gets `429 rate_limited` before its body is read, so flooding or guessing keys stays cheap.
 * A known key on its own routes and the public routes are never refused: behind one NAT or proxy address,
 * one client guessing keys must not fail everybody's health checks. Counted in memory (rate-limiter-flexible).
 */
import type { Context, Middleware } from 'koa';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Authenticator } from '../../auth/authenticator.js';
import { problemOf } from '../error-table.js';
import { Problem } from '../problem.js';
import type { RequestState } from './request-id.js';

/** Addresses remembered as blocked before the expired ones are swept out. */
const SWEEP_AT = 10_000;

export type PresentedKeys = Pick<Authenticator, 'presentsUnknownKey'>;

export function unauthenticatedLimit(
  perMinute: number,
  keys: PresentedKeys,
  clientAddress: (ctx: Context) => string,
): Middleware<RequestState> {
  const limiter = new RateLimiterMemory({ keyPrefix: 'unauthenticated', points: perMinute, duration: 60 });
  /**
   * Addresses over their allowance, until their window ends (what the limiter answered at the failure that
   * used it up). Kept here so that a blocked address's further failures are refused without an asynchronous
   * look-up in the limiter.
   */
  const blocked = new Map<string, number>();
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const problem = problemOf(error);
      if (problem?.code === 'unauthorized' || problem?.code === 'forbidden') {
        // Only a request that failed authentication is looked at: the address is read from its headers only then.
        const address = clientAddress(ctx);
        const seconds = secondsBlocked(address);
        if (seconds !== undefined) throw rateLimited(seconds);
        if (problem.status === 401 || keys.presentsUnknownKey(ctx)) {
          const used = await limiter.penalty(address, 1);
          if (used.consumedPoints >= perMinute) block(address, Date.now() + used.msBeforeNext);
        }
      }
      throw error;
    }
  };

  /** The seconds left of the address's block, undefined when it is not blocked. */
  function secondsBlocked(address: string): number | undefined {
    const until = blocked.get(address);
    if (until === undefined) return undefined;
    const now = Date.now();
    if (until <= now) {
      blocked.delete(address);
      return undefined;
    }
    return Math.max(1, Math.ceil((until - now) / 1000));
  }

  function block(address: string, until: number): void {
    if (blocked.size >= SWEEP_AT) {
      const now = Date.now();
      for (const [other, end] of blocked) if (end <= now) blocked.delete(other);
    }
    blocked.set(address, until);
  }
}

const rateLimited = (seconds: number) =>
  new Problem(429, 'rate_limited', `too many unauthenticated requests from this address; try again in ${seconds} s`, {
    headers: { 'Retry-After': String(seconds) },
  });
