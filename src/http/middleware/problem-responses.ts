import type { Middleware } from 'koa';
import { problemOf } from '../error-table.js';
import { Problem, malformedJson, notFound, payloadTooLarge, unsupportedMediaType } from '../problem.js';
import { jsonText } from '../json-text.js';
import { checkJsonShape } from '../validation.js';
import type { RequestState } from './request-id.js';

/**
 * co-body parses with @hapi/bourne, which refuses `__proto__` keys with a SyntaxError. That body is valid
 * JSON with a forbidden key, not malformed: parse it plainly (safe, it is not used) to name the key's path.
 */
function parseFailure(error: SyntaxError & { body?: unknown }): Problem {
  if (typeof error.body === 'string' && /prototype property/.test(error.message)) {
    try {
      checkJsonShape(JSON.parse(error.body), 'body');
    } catch (problem) {
      if (problem instanceof Problem) return problem;
    }
  }
  return malformedJson();
}

interface HttpishError extends Error {
  code?: unknown;
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  limit?: number;
  headers?: Record<string, string>;
}

/**
 * Turns every failure below it into problem+json. Known failures keep their 4xx; anything unexpected
 * is logged with the request id and answered 500 without internals (and has a test that it cannot be
 * reached by input).
 */
export function problemResponses(onDiskFull?: (error: unknown) => void): Middleware<RequestState> {
  return async (ctx, next) => {
    let problem: Problem;
    try {
      await next();
      if (ctx.status !== 404 || ctx.body != null) return;
      problem = notFound(`no route for ${ctx.method} ${ctx.path}`);
    } catch (error) {
      problem = toProblem(error as HttpishError);
      if (problem.code === 'insufficient_storage') onDiskFull?.(error);
      if (problem.status >= 500 && problem.code === 'internal_error') {
        ctx.state.log?.error({ err: error, method: ctx.method, url: ctx.url }, 'unexpected error');
      }
    }
    ctx.status = problem.status;
    ctx.type = 'application/problem+json';
    ctx.body = jsonText(problem.toBody(ctx.state.requestId));
    for (const [name, value] of Object.entries(problem.extra.headers ?? {})) ctx.set(name, value);
  };
}

function toProblem(error: HttpishError): Problem {
  const known = problemOf(error);
  if (known) return known;
  // raw-body / co-body errors from the body parser.
  switch (error.type) {
    case 'entity.too.large':
      return payloadTooLarge(error.limit ?? 0);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedMediaType(error.message);
    case 'request.aborted':
    case 'request.size.invalid':
      return new Problem(400, 'invalid_request', error.message, { errors: [] });
  }
  if (isDecodingError(error)) return undecodableBody();
  const status = error.status ?? error.statusCode;
  if (error instanceof SyntaxError) return parseFailure(error);
  // inflation refuses an encoding it does not know with a bare 415 (no type, no message worth showing).
  if (status === 415)
    return unsupportedMediaType('Content-Encoding must be gzip, deflate, br or none (one of them, lower case)');
  if (status !== undefined && status >= 400 && status < 500) {
    return new Problem(
      status,
      status === 404 ? 'not_found' : 'invalid_request',
      error.expose ? error.message : undefined,
      {
        errors: [],
      },
    );
  }
  return new Problem(500, 'internal_error', 'an unexpected error occurred; the request id is in the server log');
}

/** zlib's errors (Z_DATA_ERROR, Z_BUF_ERROR…) and brotli's (ERR__ERROR_FORMAT_…): the bytes do not match their Content-Encoding. */
export function isDecodingError(error: { code?: unknown }): boolean {
  return (
    typeof error.code === 'string' &&
    (error.code.startsWith('Z_') || error.code.startsWith('ERR__ERROR_') || error.code.startsWith('ERR_BROTLI'))
  );
}

export const undecodableBody = () =>
  new Problem(400, 'invalid_request', 'the request body cannot be decoded: it does not match its Content-Encoding', {
    errors: [{ path: '/', message: 'is not decodable' }],
  });
