import Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import { problemResponses } from './middleware/problem-responses.js';
import { type RequestState, requestId } from './middleware/request-id.js';
import { Problem } from './problem.js';
import type { RouteSpec } from './route.js';
import { buildRouter } from './router.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface HttpAppOptions {
  routes: readonly RouteSpec[];
  authenticator: Authenticator;
  logger: Logger;
  bodyLimitBytes: number;
  validateResponses?: boolean;
}

/** The Koa application: request ids, problem+json errors, a size-capped JSON parser, then the routes. */
export function createHttpApp(options: HttpAppOptions): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: false });
  // Koa would print errors itself; problemResponses already logged what matters.
  app.silent = true;
  const router = buildRouter(options.routes, options);
  app.use(requestId(options.logger));
  app.use(problemResponses());
  const parseBody = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: options.bodyLimitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  // koa-body inspects content types before it looks at the method: keep it off the read path entirely.
  app.use((ctx, next) => (BODY_METHODS.has(ctx.method) ? parseBody(ctx, next) : next()));
  app.use(router.routes());
  app.use(
    router.allowedMethods({
      throw: true,
      methodNotAllowed: () => new Problem(405, 'method_not_allowed', 'this route does not take that method'),
      notImplemented: () => new Problem(405, 'method_not_allowed', 'this method is not supported'),
    }),
  );
  return app;
}
