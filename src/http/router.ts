import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { Compile } from 'typebox/compile';
import { type Authenticator, type Caller, hasScope } from '../auth/authenticator.js';
import type { Scope } from '../auth/scopes.js';
import type { StreamTickets } from '../auth/stream-tickets.js';
import type { RequestState } from './middleware/request-id.js';
import { Problem, unsupportedMediaType } from './problem.js';
import type { DeviceLookup, RequestDevice, RouteSpec } from './route.js';
import { deviceNotFound } from '../errors/domain-error.js';
import { PrebuiltJson, isJsonValue, jsonText } from './json-text.js';
import { RouteIndex } from './route-index.js';
import { checkJsonShape, compileValidator } from './validation.js';

export interface RouterOptions {
  authenticator: Authenticator;
  /**
   * The size-capped JSON parser of routes that take a body and have no parser of their own. It runs after
   * authentication, so a caller without the right key gets 401 (and is counted), whatever its body holds.
   */
  parseJsonBody: Middleware;
  devices: DeviceLookup;
  /** Single-use stream tickets, for the routes that take `?ticket=` (acceptsTicket). */
  tickets?: StreamTickets;
  /** Check every answer against its declared schema (tests turn this on; a mismatch is a bug → 500). */
  validateResponses?: boolean;
  /**
   * Read-your-writes on the read side (src/projections/read-barrier.ts): a request waits, before it loads its device,
   * until the read models include what the log held when it arrived; routes that read them as they are do not.
   */
  readBarrier?: { beforeRead(): Promise<unknown> | undefined };
}

export interface BuiltRoutes {
  /** Every route, for what the index leaves to it (HEAD, OPTIONS, 404, 405, unusual spellings of a path). */
  router: Router<RequestState>;
  /** The same routes and middleware, found without @koa/router's scan (src/http/route-index.ts). */
  index: RouteIndex<{ spec: RouteSpec; middleware: Middleware<RequestState> }>;
}

export function buildRouter(routes: readonly RouteSpec[], options: RouterOptions): BuiltRoutes {
  const router = new Router<RequestState>();
  const index = new RouteIndex<{ spec: RouteSpec; middleware: Middleware<RequestState> }>();
  for (const route of routes) {
    const middleware = routeMiddleware(route, options);
    router[route.method](route.path, middleware);
    index.add(route.method, route.path, { spec: route, middleware });
  }
  return { router, index };
}

function routeMiddleware(route: RouteSpec, options: RouterOptions): Middleware<RequestState> {
  const params = route.params ? compileValidator(route.params, 'params') : undefined;
  const query = route.query ? compileValidator(route.query, 'query') : undefined;
  const body = route.body ? compileValidator(route.body, 'body') : undefined;
  const responseCheckers = options.validateResponses ? compileResponseCheckers(route) : undefined;
  const loadsDevice = route.path.includes(':deviceId') && route.device !== 'none';
  const parseBody = route.bodyParser?.parse ?? (route.method === 'get' ? undefined : options.parseJsonBody);
  const barrier = route.reads === 'as-they-are' ? undefined : options.readBarrier;

  return async (ctx) => {
    // Authentication comes first, so that a caller without the right key learns nothing from validation.
    const ticket = route.acceptsTicket ? ctx.query.ticket : undefined;
    const caller = (ctx.state.caller =
      typeof ticket === 'string' && options.tickets
        ? ticketCaller(route, ctx, await options.tickets.redeem(ticket), options.authenticator)
        : authenticate(route, ctx, options.authenticator));
    if (route.scope !== 'none') requireScope(caller, route.scope);
    const behind = barrier?.beforeRead();
    if (behind) await behind;
    // The admin key reaches every device path: a device that does not exist is a 404 before anything else.
    const device = loadsDevice
      ? loadDevice(String((ctx.params as Record<string, string>).deviceId ?? ''), options.devices)
      : undefined;
    if (parseBody) await parseBody(ctx, () => handle(ctx, device));
    else await handle(ctx, device);
  };

  async function handle(ctx: Context & { state: RequestState }, device: RequestDevice | undefined): Promise<void> {
    const input = new Input(
      params ? params.parse(ctx.params) : undefined,
      query ? query.parse({ ...ctx.query }) : undefined,
      body ? body.parse(jsonBody(ctx, route.bodyParser?.multipart === true)) : undefined,
      device,
      route.operationId,
      ctx,
    );
    const result = await route.handler(input);
    responseCheckers?.(result.status, result.body instanceof PrebuiltJson ? result.body.toJSON() : result.body);
    ctx.status = result.status;
    if (result.headers) for (const name of Object.keys(result.headers)) ctx.set(name, result.headers[name]);
    if (result.body !== undefined) {
      const contentType = route.responses[result.status]?.contentType;
      if (contentType && !ctx.response.get('Content-Type')) ctx.type = contentType;
      if (result.body instanceof PrebuiltJson) {
        if (!ctx.response.get('Content-Type')) ctx.type = 'application/json';
        ctx.body = `${result.body.text}\n`;
      } else if (isJsonValue(result.body)) {
        if (!ctx.response.get('Content-Type')) ctx.type = 'application/json';
        ctx.body = jsonText(result.body);
      } else ctx.body = result.body;
    }
  }
}

/** A handler's input (a class: one is made per request, and an object literal with a getter costs more). */
class Input {
  constructor(
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    private readonly loaded: RequestDevice | undefined,
    private readonly operationId: string,
    readonly ctx: Context & { state: RequestState },
  ) {}

  get device(): RequestDevice {
    if (!this.loaded) throw new Error(`${this.operationId} has no device of its own`);
    return this.loaded;
  }
}

function loadDevice(deviceId: string, devices: DeviceLookup): RequestDevice {
  const device = devices(deviceId);
  if (!device) throw deviceNotFound(deviceId);
  return device;
}

/**
 * The caller a stream ticket stands for, held to the route's access like a key: an unknown, used or expired
 * ticket, or one whose key was rotated out or deleted since, is 401; a device's ticket on an admin route 403,
 * on another device's route 401.
 */
function ticketCaller(
  route: RouteSpec,
  ctx: Context,
  caller: Caller | undefined,
  authenticator: Authenticator,
): Caller {
  if (!caller || !authenticator.stillValid(caller))
    throw new Problem(401, 'unauthorized', 'the ticket is unknown, used or expired, or its key no longer holds');
  if (caller.kind === 'admin') return caller;
  if (route.access === 'admin') throw new Problem(403, 'forbidden', 'this key may not use this route');
  const deviceId = String((ctx.params as Record<string, string>).deviceId ?? '');
  if (route.access === 'device' && caller.deviceId !== deviceId)
    throw new Problem(401, 'unauthorized', 'a valid API key is required');
  return caller;
}

/** A scope the route needs that the caller lacks: `403 insufficient_scope`, naming it. */
export function requireScope(caller: Caller | undefined, scope: Scope): void {
  if (hasScope(caller, scope)) return;
  throw new Problem(403, 'insufficient_scope', `this key lacks the "${scope}" scope this route needs`, {
    requiredScope: scope,
  });
}

function authenticate(route: RouteSpec, ctx: Context, authenticator: Authenticator): Caller | undefined {
  switch (route.access) {
    case 'public':
      return undefined;
    case 'public-or-admin':
      return authenticator.optionalAdmin(ctx);
    case 'admin':
      return authenticator.admin(ctx);
    case 'device':
      return authenticator.device(ctx, String((ctx.params as Record<string, string>).deviceId ?? ''));
    case 'any-key':
      return authenticator.anyKey(ctx);
  }
}

/** The parsed JSON body (or multipart fields, where the route takes them), `{}` when none was sent; any other content type is refused. */
function jsonBody(ctx: Context, multipart = false): unknown {
  const hasBody = ctx.request.length > 0 || ctx.get('transfer-encoding') !== '';
  if (!hasBody) return {};
  if (multipart && ctx.request.is('multipart')) {
    checkJsonShape((ctx.request as { body?: unknown }).body, 'body');
    return (ctx.request as { body?: unknown }).body ?? {};
  }
  if (!ctx.request.is('json'))
    throw unsupportedMediaType(
      `the request body must be application/json${multipart ? ' or multipart/form-data' : ''}`,
    );
  const parsed = (ctx.request as { body?: unknown }).body;
  checkJsonShape(parsed, 'body');
  return parsed ?? {};
}

function compileResponseCheckers(route: RouteSpec) {
  const checkers = new Map<number, ReturnType<typeof Compile>>();
  for (const [status, spec] of Object.entries(route.responses)) {
    if (spec.schema && !spec.contentType) checkers.set(Number(status), Compile(spec.schema));
  }
  return (status: number, body: unknown) => {
    if (!(status in route.responses)) throw new Error(`${route.operationId} answered undeclared status ${status}`);
    const checker = checkers.get(status);
    if (checker && !checker.Check(body)) {
      const first = [...checker.Errors(body)][0];
      throw new Error(
        `${route.operationId} ${status} answer does not match its schema: ${first?.instancePath} ${first?.message}`,
      );
    }
  };
}
