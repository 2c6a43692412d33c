import Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { StreamTickets } from '../auth/stream-tickets.js';
import { httpMetrics } from '../metrics/http-metrics.js';
import type { Metrics } from '../metrics/metrics.js';
import { TrustedProxies } from './client-address.js';
import { problemResponses } from './middleware/problem-responses.js';
import { type RequestState, requestId } from './middleware/request-id.js';
import { requireHost } from './middleware/require-host.js';
import { unauthenticatedLimit } from './middleware/unauthenticated-limit.js';
import { Problem } from './problem.js';
import type { DeviceLookup, RouteSpec } from './route.js';
import { type RouterOptions, buildRouter } from './router.js';

export interface HttpAppOptions {
  routes: readonly RouteSpec[];
  authenticator: Authenticator;
  /** Single-use stream tickets (WebSocket routes). */
  tickets?: StreamTickets;
  devices: DeviceLookup;
  logger: Logger;
  bodyLimitBytes: number;
  validateResponses?: boolean;
  metrics?: Metrics;
  /** Told of every request that failed for want of disk space (health reports it). */
  onDiskFull?: (error: unknown) => void;
  /** Requests failing authentication per address and minute before 429 (unset: no limit). */
  unauthenticatedPerMinute?: number;
  /** Reverse proxies whose X-Forwarded-For names the client (TRUST_PROXY); none by default. */
  trustedProxies?: TrustedProxies;
  /** What a request waits for before it reads the read models (src/projections/read-barrier.ts). */
  readBarrier?: RouterOptions['readBarrier'];
}

/**
 * The Koa application: request ids, problem+json errors, the Host header, the limit of failed
 * authentications, then the routes, which authenticate before they parse a body (the size-capped JSON parser here, or their own).
 */
export function createHttpApp(options: HttpAppOptions): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: false });
  // Koa would print errors itself; problemResponses already logged what matters.
  app.silent = true;
  const parseJsonBody = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: options.bodyLimitBytes,
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  const { router, index } = buildRouter(options.routes, { ...options, parseJsonBody });
  app.use(requestId(options.logger));
  if (options.metrics) app.use(httpMetrics(options.metrics));
  app.use(problemResponses(options.onDiskFull));
  app.use(requireHost());
  if (options.unauthenticatedPerMinute !== undefined) {
    const proxies = options.trustedProxies ?? new TrustedProxies([]);
    app.use(
      unauthenticatedLimit(options.unauthenticatedPerMinute, options.authenticator, (ctx) =>
        proxies.clientOf(ctx.socket.remoteAddress, ctx.get('x-forwarded-for')),
      ),
    );
  }
  // What the index does not answer goes through @koa/router: the routes (each parses its body after it
  // authenticates), then 404/405 with no body read.
  const routes = router.routes();
  const allowedMethods = router.allowedMethods({
    throw: true,
    methodNotAllowed: () => new Problem(405, 'method_not_allowed', 'this route does not take that method'),
    notImplemented: () => new Problem(405, 'method_not_allowed', 'this method is not supported'),
  });
  const fallback: Koa.Middleware<RequestState> = (ctx, next) => {
    // @koa/router types its own context (params, router), which it sets itself.
    return routes(ctx as never, () => allowedMethods(ctx as never, next) as Promise<void>) as Promise<void>;
  };
  app.use((ctx, next) => {
    const found = index.find(ctx.method, ctx.path);
    if (!found) return fallback(ctx, next) as Promise<void>;
    // What @koa/router would have set for this route: its parameters, and the template the metrics label.
    ctx.params = found.params;
    (ctx as { _matchedRoute?: string })._matchedRoute = found.route.path;
    return found.route.value.middleware(ctx, next) as Promise<void>;
  });
  return app;
}
