/**
 * RFC 9457 problem details. Every error the API answers is one of these, with a stable `code`
 * (docs/api-errors in the OpenAPI description). Routes throw Problems for what only HTTP knows (validation,
 * content types); domain code throws DomainErrors, which src/http/error-table.ts turns into Problems.
 */
import { STATUS_CODES } from 'node:http';
import type { FieldError } from '../errors/domain-error.js';
import type { ErrorCode } from '../errors/error-codes.js';

export type { FieldError };

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail?: string;
  errors?: FieldError[];
  /** Why, in one stable word, where a code has several causes (e.g. `media_unavailable`). */
  reason?: string;
  /** The scope the route needs (`insufficient_scope`). */
  requiredScope?: string;
  requestId?: string;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly extra: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      reason?: string;
      requiredScope?: string;
    } = {},
  ) {
    super(detail ?? code);
  }

  toBody(requestId?: string): ProblemBody {
    return {
      type: 'about:blank',
      title: STATUS_CODES[this.status] ?? 'Error',
      status: this.status,
      code: this.code,
      ...(this.detail === undefined ? {} : { detail: this.detail }),
      ...(this.extra.errors ? { errors: this.extra.errors } : {}),
      ...(this.extra.reason === undefined ? {} : { reason: this.extra.reason }),
      ...(this.extra.requiredScope === undefined ? {} : { requiredScope: this.extra.requiredScope }),
      ...(requestId ? { requestId } : {}),
    };
  }
}

export const invalidRequest = (detail: string, errors: FieldError[]) =>
  new Problem(400, 'invalid_request', detail, { errors });
export const malformedJson = (detail = 'the request body is not valid JSON') =>
  new Problem(400, 'malformed_json', detail);
export const unauthorized = () => new Problem(401, 'unauthorized', 'a valid API key is required');
export const forbidden = () => new Problem(403, 'forbidden', 'this key may not use this route');
export const notFound = (detail = 'no such resource') => new Problem(404, 'not_found', detail);
export const conflict = (code: ErrorCode, detail: string) => new Problem(409, code, detail);
export const payloadTooLarge = (limit: number) =>
  new Problem(413, 'payload_too_large', `the request body exceeds ${limit} bytes`);
export const unsupportedMediaType = (detail: string) => new Problem(415, 'unsupported_media_type', detail);
