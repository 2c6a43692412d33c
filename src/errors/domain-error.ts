/**
 * The errors domain code refuses a command with. Each carries a stable `code`; only src/http decides
 * what a code means over HTTP (src/http/error-table.ts), so that no domain module knows about HTTP.
 */

import type { ErrorCode } from './error-codes.js';

/** Every code a domain module may refuse with: a part of the catalogue (error-codes.ts), which gives each its status. */
export const DOMAIN_ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'forbidden',
  'insufficient_scope',
  'not_found',
  'device_exists',
  'hooks_not_configured',
  'session_not_online',
  'qr_unavailable',
  'message_sending',
  'message_failed',
  'idempotency_key_reused',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'engine_unavailable',
  'engine_error',
  'shutting_down',
  'busy',
  'insufficient_storage',
  'message_not_found',
  'not_editable',
  'not_forwardable',
  'media_expired',
  'media_unavailable',
  'not_group_admin',
  'not_channel_admin',
  'invalid_pairing_code',
  'pairing_unavailable',
  'too_many_webhooks',
  'recipient_unresponsive',
  'chat_not_found',
  'label_not_found',
  'not_business_account',
  'empty_audience',
  'too_many_keys',
  'concurrent_change',
] as const satisfies readonly ErrorCode[];

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/** Which part of the input was wrong (a JSON pointer into the request, e.g. `/url`). */
export interface FieldError {
  path: string;
  message: string;
}

export interface DomainErrorOptions {
  /** The fields at fault, for `invalid_request`. */
  fields?: FieldError[];
  /** When trying again makes sense (`rate_limited`, `busy`). */
  retryAfterSeconds?: number;
  /** Why, in one stable word, where a code has several causes (`media_unavailable`: not_downloaded, failed, …). */
  reason?: string;
  cause?: unknown;
}

export class DomainError extends Error {
  override readonly name = 'DomainError';
  readonly fields: FieldError[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly reason: string | undefined;

  constructor(
    readonly code: DomainErrorCode,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.fields = options.fields;
    this.reason = options.reason;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * The one wording of "this needs an online session". `state` is the session's state as the caller knows it;
 * a session that says `online` while its connection is not usable here (reconnecting in between, or run by
 * another process) is told as such, never as "the session is online, not online".
 */
export function sessionNotOnline(state: string | undefined): DomainError {
  if (state === undefined) return new DomainError('session_not_online', 'the session is not online');
  if (state === 'online')
    return new DomainError('session_not_online', 'the session is online but its connection is not ready; try again', {
      retryAfterSeconds: 1,
    });
  return new DomainError('session_not_online', `the session is ${state}, not online`);
}

/** The wording every "no such device" answer shares. */
export const deviceNotFound = (deviceId: string) => new DomainError('not_found', `device "${deviceId}" does not exist`);

/** A field of the input that the domain found wrong after the schema let it through. */
export const invalidField = (path: string, message: string, detail = `body${path} ${message}`) =>
  new DomainError('invalid_request', detail, { fields: [{ path, message }] });
