/**
 * The one table that turns what the rest of the gateway throws into problem+json: DomainErrors by their
 * code, the store's and the read models' failures by their class. Anything not in it is an unexpected
 * error: a logged 500 with the request id (problem-responses.ts).
 */
import { ERROR_CATALOGUE } from '../errors/error-codes.js';
import { DOMAIN_ERROR_CODES, type DomainErrorCode, DomainError } from '../errors/domain-error.js';
import {
  FenceRejectedError,
  StoreRefusedError,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '../eventstore/event-store.js';
import { ProjectionLagError } from '../projections/projection-runner.js';
import { isDiskFull } from '../storage/storage-health.js';
import { HookSecretUnreadableError } from '../webhooks/hook-secrets.js';
import { Problem } from './problem.js';

/** HTTP status of every domain error code, from the one catalogue. */
export const STATUS_OF_CODE: Readonly<Record<DomainErrorCode, number>> = Object.fromEntries(
  DOMAIN_ERROR_CODES.map((code) => [code, ERROR_CATALOGUE[code].status]),
) as Record<DomainErrorCode, number>;

export const insufficientStorage = () =>
  new Problem(507, 'insufficient_storage', 'the gateway has no disk space left; nothing was stored; try again later', {
    headers: { 'Retry-After': '30' },
  });

/** The problem an error stands for; undefined when it is not one the table knows. */
export function problemOf(error: unknown): Problem | undefined {
  if (error instanceof Problem) return error;
  if (error instanceof DomainError) {
    const headers =
      error.retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(error.retryAfterSeconds) };
    const errors = error.fields ?? (error.code === 'invalid_request' ? [] : undefined);
    return new Problem(STATUS_OF_CODE[error.code], error.code, error.message, {
      ...(errors ? { errors } : {}),
      ...(headers ? { headers } : {}),
      // insufficient_scope's reason is the scope lacking, which the problem names as `requiredScope`.
      ...(error.reason === undefined
        ? {}
        : error.code === 'insufficient_scope'
          ? { requiredScope: error.reason }
          : { reason: error.reason }),
    });
  }
  // Before store_unavailable: a full disk is a condition of its own, which the operator must fix.
  if (isDiskFull(error)) return insufficientStorage();
  if (error instanceof StoreRefusedError) {
    if (error.code === 'append_too_large')
      return new Problem(
        413,
        'payload_too_large',
        'what this request would record is larger than the event store takes in one append',
      );
    return new Problem(503, 'store_refused', `the event store refused the write (${error.code}); try again later`, {
      headers: { 'Retry-After': '5' },
    });
  }
  if (error instanceof StoreUnavailableError)
    return new Problem(503, 'store_unavailable', 'the event store cannot be reached; try again', {
      headers: { 'Retry-After': '1' },
    });
  // Decided again as often as the command handler allows, and still refused: others keep writing the same thing.
  if (error instanceof WrongExpectedRevisionError)
    return new Problem(
      409,
      'concurrent_change',
      'the resource was changed by another request at the same time; try again',
    );
  // Several processes: the device moved to another process while this one acted for it.
  if (error instanceof FenceRejectedError) {
    return new Problem(
      409,
      'concurrent_change',
      'the device is being taken over by another gateway process; try again',
      { headers: { 'Retry-After': '1' } },
    );
  }
  // The operator's to fix (the key the secrets were sealed with), not the caller's.
  if (error instanceof HookSecretUnreadableError) {
    return new Problem(
      503,
      'hook_secret_unreadable',
      `${error.message}: start the gateway with that key, or configure the hook again with "rotateSecret": true`,
    );
  }
  if (error instanceof ProjectionLagError) {
    return new Problem(
      503,
      'read_models_lagging',
      'the change was recorded but cannot be read back yet; retry with the same Idempotency-Key to get its answer',
      {
        headers: { 'Retry-After': '5' },
      },
    );
  }
  return undefined;
}
