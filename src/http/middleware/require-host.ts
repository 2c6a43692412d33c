import type { Middleware } from 'koa';
import { Problem } from '../problem.js';

/**
 * HTTP/1.1 requires a Host header (RFC 9112 §3.2). Node would refuse a request without one with a bare 400
 * and no body; the server leaves that to this middleware (src/http/http-server.ts) so that the answer is
 * problem+json like every other. The connection is closed after it, as Node did.
 */
export function requireHost(): Middleware {
  return (ctx, next) => {
    if (ctx.req.headers.host === undefined && ctx.req.httpVersion === '1.1')
      throw new Problem(400, 'invalid_request', 'an HTTP/1.1 request must have a Host header', {
        errors: [{ path: '/headers/host', message: 'is required' }],
        headers: { Connection: 'close' },
      });
    return next();
  };
}
