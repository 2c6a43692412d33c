/**
 * One signed attempt: POST the envelope to the receiver with the Standard Webhooks headers and report what
 * happened. Plain node:http(s) through the outbound guard's keep-alive agents, with the guard's URL check
 * first, no redirects, a whole-request timeout and no retries of its own: got's per-request machinery cost
 * more than the rest of a delivery. Success is the status line; the body is read (so the connection can be
 * reused) but never kept, and a receiver that talks too long is cut off.
 */
import { type KeyObject, createHmac, createSecretKey } from 'node:crypto';
import { type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { PRIVATE_ADDRESS_REFUSAL, type OutboundGuard, isDestinationRefused } from '../net/outbound-guard.js';
import { USER_AGENT } from '../net/outbound-http.js';
import { type AttemptResult, parseRetryAfter } from './retry-policy.js';

export interface WebhookTarget {
  url: string;
  /** `whsec_…` */
  secret: string;
}

export interface WebhookMessage {
  /** The envelope id: the `webhook-id` header. */
  id: string;
  /** The JSON envelope, exactly as signed and sent. */
  payload: string;
}

/**
 * What the hook's owner is told when no answer came (a test, the deliveries log): one reason, whatever the
 * cause, since "host not found", "refused" and "private address" would let them map the gateway's network.
 * The cause is kept for the admin (the delivery events, the admin's view of the deliveries, the gateway log).
 */
export const UNREACHABLE = 'unreachable';

/** An answer's body beyond this is not read: the status line has already said what matters. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_ERROR_LENGTH = 500;
/** Signing keys are kept decoded and URLs parsed; a handful of each is the usual working set. */
const MAX_CACHED_KEYS = 1_000;
/** The Standard Webhooks secret prefix; the rest is the key, base64. */
const SECRET_PREFIX = 'whsec_';

class RequestTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

/** What a target URL is dialled as, judged and parsed once per URL (hooks change rarely). */
interface Destination {
  url: URL;
  https: boolean;
}

export class WebhookSender {
  private readonly keys = new Map<string, KeyObject>();
  private readonly destinations = new Map<string, Destination>();
  /** Requests in flight: abortAll() cuts them short (at shutdown). */
  private readonly inFlight = new Set<ClientRequest>();

  constructor(
    private readonly guard: OutboundGuard,
    private readonly timeoutMs: number,
    /** Resolves host names (default: the system's); the guard's agent judges what it answers before dialling. */
    private readonly lookup?: LookupFunction,
  ) {}

  send(target: WebhookTarget, message: WebhookMessage): Promise<AttemptResult> {
    const started = performance.now();
    return new Promise((resolve) => {
      let settled = false;
      let answer: { status: number; headers: IncomingHttpHeaders } | undefined;
      let timer: NodeJS.Timeout | undefined;
      let req: ClientRequest | undefined;
      const finish = (error?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (req) this.inFlight.delete(req);
        const durationMs = Math.round((performance.now() - started) * 10) / 10;
        resolve(
          answer
            ? resultOfAnswer(answer.status, answer.headers, durationMs)
            : { delivered: false, error: this.describe(error), durationMs },
        );
      };
      try {
        const { url, https } = this.destination(target.url);
        const timestamp = String(Math.floor(Date.now() / 1000));
        req = (https ? httpsRequest : httpRequest)(url, {
          method: 'POST',
          agent: https ? this.guard.agents.https : this.guard.agents.http,
          headers: {
            'user-agent': USER_AGENT,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(message.payload),
            'webhook-id': message.id,
            'webhook-timestamp': timestamp,
            'webhook-signature': this.sign(target.secret, message.id, timestamp, message.payload),
          },
          ...(this.lookup ? { lookup: this.lookup } : {}),
        });
      } catch (error) {
        finish(error);
        return;
      }
      const sent = req;
      this.inFlight.add(sent);
      timer = setTimeout(
        () => sent.destroy(new RequestTimeoutError(`timed out after ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
      sent.on('response', (response: IncomingMessage) => {
        answer = { status: response.statusCode ?? 0, headers: response.headers };
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) {
            finish();
            sent.destroy();
          }
        });
        response.on('end', () => finish());
        // After the status line, a broken body changes nothing: the receiver has answered.
        response.on('error', () => finish());
      });
      sent.on('error', (error: Error) => finish(error));
      sent.on('close', () => finish(new Error('the connection closed before an answer')));
      sent.end(message.payload);
    });
  }

  /** Cuts every request in flight short; each answers as failed (its attempt is not to be recorded). */
  abortAll(): void {
    for (const req of this.inFlight) req.destroy(new Error('the gateway is stopping'));
  }

  /** The guard judges the protocol and IP literals before anything is sent; the agent judges the addresses dialled. */
  private destination(target: string): Destination {
    let destination = this.destinations.get(target);
    if (!destination) {
      const url = new URL(target);
      this.guard.assertAllowed(url);
      if (this.destinations.size >= MAX_CACHED_KEYS) this.destinations.clear();
      destination = { url, https: url.protocol === 'https:' };
      this.destinations.set(target, destination);
    }
    return destination;
  }

  /** `v1,` + base64 HMAC-SHA256 of `id.timestamp.payload`, as the Standard Webhooks libraries sign and verify. */
  private sign(secret: string, id: string, timestamp: string, payload: string): string {
    let key = this.keys.get(secret);
    if (!key) {
      if (this.keys.size >= MAX_CACHED_KEYS) this.keys.clear();
      const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
      key = createSecretKey(Buffer.from(encoded, 'base64'));
      this.keys.set(secret, key);
    }
    return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`).digest('base64')}`;
  }

  private describe(error: unknown): string {
    const code = (error as { code?: unknown } | undefined)?.code;
    const message = error instanceof Error ? error.message : String(error);
    let text: string;
    // Never the resolved address: the owner of the hook must not learn what lies inside the network.
    if (isDestinationRefused(error)) text = PRIVATE_ADDRESS_REFUSAL;
    else if (code === 'ETIMEDOUT') text = `timed out after ${this.timeoutMs} ms`;
    else if (code === 'ECONNREFUSED') text = 'connection refused';
    else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') text = `host not found (${code})`;
    else text = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
    return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
  }
}

function resultOfAnswer(status: number, headers: IncomingHttpHeaders, durationMs: number): AttemptResult {
  if (status >= 200 && status < 300) return { delivered: true, status, durationMs };
  const retryAfter = headers['retry-after'];
  const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now());
  const error = status >= 300 && status < 400 ? `answered ${status}; redirects are not followed` : `answered ${status}`;
  return { delivered: false, status, error, durationMs, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}
