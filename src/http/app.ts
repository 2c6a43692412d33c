import Router from '@koa/router';
import Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import { httpMetrics } from '../metrics/http-metrics.js';
import type { Metrics } from '../metrics/metrics.js';
import { problemResponses } from './middleware/problem-responses.js';
import { type RequestState, requestId } from './middleware/request-id.js';
import { unauthenticatedLimit } from './middleware/unauthenticated-limit.js';
import { Problem } from './problem.js';
import type { DeviceLookup, RouteSpec } from './route.js';
import { buildRouter } from './router.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface HttpAppOptions {
  routes: readonly RouteSpec[];
  authenticator: Authenticator;
  devices: DeviceLookup;
  logger: Logger;
  bodyLimitBytes: number;
  validateResponses?: boolean;
  metrics?: Metrics;
  /** Told of every request that failed for want of disk space (health reports it). */
  onDiskFull?: (error: unknown) => void;
  /** Requests failing authentication per address and minute before 429 (unset: no limit). */
  unauthenticatedPerMinute?: number;
}

/** The Koa application: request ids, problem+json errors, a size-capped JSON parser, then the routes. */
export function createHttpApp(options: HttpAppOptions): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: false });
  // Koa would print errors itself; problemResponses already logged what matters.
  app.silent = true;
  const { router, index } = buildRouter(options.routes, options);
  app.use(requestId(options.logger));
  if (options.metrics) app.use(httpMetrics(options.metrics));
  app.use(problemResponses(options.onDiskFull));
  if (options.unauthenticatedPerMinute !== undefined) app.use(unauthenticatedLimit(options.unauthenticatedPerMinute, (ctx) => options.authenticator.knowsAnyKey(ctx)));
  const parseBody = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: options.bodyLimitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  // Routes with a body parser of their own (media sends) parse after authentication, with their own limits.
  // A router holding only those routes, so that the check matches a handful of paths, not every route.
  const ownParsers = new Router();
  for (const route of options.routes) if (route.bodyParser) ownParsers.register(route.path, [route.method], () => undefined);
  const parsesOwnBody = (ctx: Koa.Context) => ownParsers.match(ctx.path, ctx.method).route;
  // What the index does not answer goes through @koa/router as before: koa-body kept off the read path
  // entirely (it inspects content types before it looks at the method), the routes, then 404/405.
  const routes = router.routes();
  const allowedMethods = router.allowedMethods({
    throw: true,
    methodNotAllowed: () => new Problem(405, 'method_not_allowed', 'this route does not take that method'),
    notImplemented: () => new Problem(405, 'method_not_allowed', 'this method is not supported'),
  });
  const fallback: Koa.Middleware<RequestState> = (ctx, next) => {
    // @koa/router types its own context (params, router), which it sets itself.
    const route = () => routes(ctx as never, () => allowedMethods(ctx as never, next));
    return BODY_METHODS.has(ctx.method) && !parsesOwnBody(ctx) ? parseBody(ctx, route) : route();
  };
  app.use((ctx, next) => {
    const found = index.find(ctx.method, ctx.path);
    if (!found) return fallback(ctx, next);
    // What @koa/router would have set for this route: its parameters, and the template the metrics label.
    ctx.params = found.params;
    (ctx as { _matchedRoute?: string })._matchedRoute = found.route.path;
    const { spec, middleware } = found.route.value;
    if (BODY_METHODS.has(ctx.method) && !spec.bodyParser) return parseBody(ctx, () => middleware(ctx, next));
    return middleware(ctx, next);
  });
  return app;
}
