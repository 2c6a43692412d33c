import { describe, expect, it } from 'vitest';
import { DOMAIN_ERROR_CODES, DomainError } from '../../src/errors/domain-error.js';
import {
  FenceRejectedError,
  StoreRefusedError,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '../../src/eventstore/event-store.js';
import { STATUS_OF_CODE, problemOf } from '../../src/http/error-table.js';
import { ProjectionLagError } from '../../src/projections/projection-runner.js';
import { HookSecretUnreadableError } from '../../src/webhooks/hook-secrets.js';

describe('the HTTP error table', () => {
  it('gives every domain error code a 4xx or 5xx status, and only those codes', () => {
    expect(Object.keys(STATUS_OF_CODE).sort()).toEqual([...DOMAIN_ERROR_CODES].sort());
    for (const code of DOMAIN_ERROR_CODES) expect(STATUS_OF_CODE[code]).toBeGreaterThanOrEqual(400);
  });

  it('turns a domain error into its problem, with the fields at fault and Retry-After', () => {
    const invalid = problemOf(
      new DomainError('invalid_request', 'body/url is not allowed', {
        fields: [{ path: '/url', message: 'is not allowed' }],
      }),
    );
    expect(invalid?.toBody('r1')).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      code: 'invalid_request',
      detail: 'body/url is not allowed',
      errors: [{ path: '/url', message: 'is not allowed' }],
      requestId: 'r1',
    });
    const limited = problemOf(new DomainError('rate_limited', 'slow down', { retryAfterSeconds: 7 }));
    expect(limited?.status).toBe(429);
    expect(limited?.extra.headers).toEqual({ 'Retry-After': '7' });
  });

  it('maps what the store and the read models throw, never to 500', () => {
    expect(problemOf(new StoreUnavailableError('down'))?.status).toBe(503);
    expect(problemOf(new StoreRefusedError('append_too_large', 'big'))).toMatchObject({
      status: 413,
      code: 'payload_too_large',
    });
    expect(problemOf(new StoreRefusedError('access_denied', 'no'))).toMatchObject({
      status: 503,
      code: 'store_refused',
    });
    expect(problemOf(new ProjectionLagError('late'))).toMatchObject({ status: 503, code: 'read_models_lagging' });
    expect(problemOf(new WrongExpectedRevisionError('s', 1, 2))).toMatchObject({
      status: 409,
      code: 'concurrent_change',
    });
    expect(problemOf(new FenceRejectedError({ streamId: 'lease-d', revision: 1 }, 2))).toMatchObject({
      status: 409,
      code: 'concurrent_change',
    });
    expect(problemOf(new HookSecretUnreadableError('sealed'))).toMatchObject({
      status: 503,
      code: 'hook_secret_unreadable',
    });
    expect(problemOf(new Error('anything else'))).toBeUndefined();
  });
});
