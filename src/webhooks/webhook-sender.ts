/**
 * One signed attempt: POST the envelope to the receiver with the Standard Webhooks headers and report what
 * happened. The HTTP client is the guarded one (src/net): no redirects, a whole-request timeout, no retries
 * of its own. Success is decided by the status line; the answer's body is read (so the connection can be
 * reused) but never kept, and a receiver that talks too long is cut off.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Got, RequestError } from 'got';
import { Webhook } from 'standardwebhooks';
import { PRIVATE_ADDRESS_REFUSAL, isDestinationRefused } from '../net/outbound-guard.js';
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

/** An answer's body beyond this is not read: the status line has already said what matters. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_ERROR_LENGTH = 500;
/** Signers keep the decoded key; a handful of secrets is the usual working set. */
const MAX_CACHED_SIGNERS = 1_000;

export class WebhookSender {
  private readonly signers = new Map<string, Webhook>();

  constructor(
    private readonly http: Got,
    private readonly timeoutMs: number,
  ) {}

  send(target: WebhookTarget, message: WebhookMessage, signal?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const sentAt = new Date();
    return new Promise((resolve) => {
      let settled = false;
      let answer: { status: number; headers: IncomingHttpHeaders } | undefined;
      const finish = (error?: unknown) => {
        if (settled) return;
        settled = true;
        const durationMs = Math.round((performance.now() - started) * 10) / 10;
        resolve(answer ? resultOfAnswer(answer.status, answer.headers, durationMs) : { delivered: false, error: this.describe(error), durationMs });
      };
      let stream;
      try {
        stream = this.http.stream.post(target.url, {
          body: message.payload,
          headers: {
            'content-type': 'application/json',
            'webhook-id': message.id,
            'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
            'webhook-signature': this.signer(target.secret).sign(message.id, sentAt, message.payload),
          },
          signal,
        });
      } catch (error) {
        finish(error);
        return;
      }
      let received = 0;
      stream.on('response', (response: { statusCode: number; headers: IncomingHttpHeaders }) => {
        answer = { status: response.statusCode, headers: response.headers };
      });
      stream.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) {
          finish();
          stream.destroy();
        }
      });
      stream.on('end', () => finish());
      // After the status line, a broken body changes nothing: the receiver has answered.
      stream.on('error', (error: Error) => finish(error));
    });
  }

  private signer(secret: string): Webhook {
    let signer = this.signers.get(secret);
    if (!signer) {
      if (this.signers.size >= MAX_CACHED_SIGNERS) this.signers.clear();
      signer = new Webhook(secret);
      this.signers.set(secret, signer);
    }
    return signer;
  }

  private describe(error: unknown): string {
    const code = (error as RequestError | undefined)?.code;
    const message = error instanceof Error ? error.message : String(error);
    let text: string;
    // Never the resolved address: the owner of the hook must not learn what lies inside the network.
    if (isDestinationRefused(error)) text = PRIVATE_ADDRESS_REFUSAL;
    else if (code === 'ETIMEDOUT') text = `timed out after ${this.timeoutMs} ms`;
    else if (code === 'ECONNREFUSED') text = 'connection refused';
    else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') text = `host not found (${code})`;
    else text = code && !message.includes(code) ? `${code}: ${message}` : message;
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
