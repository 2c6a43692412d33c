/**
 * The HTTP client for requests the gateway makes to URLs chosen by its users (media URLs, link previews):
 * got, dialling only through the guard's agents, with no redirects (a 3xx is an answer, never followed to
 * an address nobody checked), a whole-request timeout, and got's own retries off (callers retry on their
 * own schedule and record each attempt). Webhook attempts, one per delivery, go through the same agents
 * and rules on plain node:http (src/webhooks/webhook-sender.ts).
 */
import got, { type Got } from 'got';
import { VERSION } from '../version.js';
import type { OutboundGuard } from './outbound-guard.js';

export interface OutboundHttpOptions {
  /** Whole request, connect to last byte. */
  timeoutMs: number;
}

export const USER_AGENT = `device-messaging-gateway/${VERSION}`;

export function createOutboundHttp(guard: OutboundGuard, options: OutboundHttpOptions): Got {
  return got.extend({
    agent: guard.agents,
    http2: false,
    followRedirect: false,
    retry: { limit: 0 },
    timeout: { request: options.timeoutMs },
    throwHttpErrors: false,
    headers: { 'user-agent': USER_AGENT },
    hooks: {
      // The agent judges the addresses dialled; the protocol and IP literals are judged before anything is sent.
      beforeRequest: [(request) => guard.assertAllowed(request.url as URL)],
    },
  });
}
