/**
 * A route is declared once, with TypeBox schemas for its path parameters, query, body and responses.
 * The same declaration registers the Koa handler (validating input) and produces its OpenAPI operation.
 */
import type { Context, Middleware } from 'koa';
import type { Static, TSchema } from 'typebox';
import type { RouteScope } from '../auth/scopes.js';
import type { DeviceView } from '../devices/devices-read-model.js';
import type { RequestState } from './middleware/request-id.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call: anyone, the admin key only, or the admin key or the key of the device in the path.
 * 'public-or-admin': anyone, and the handler shows more to the admin key (a key it does not know is 401).
 * 'any-key': the admin key or any device's key (the route acts for whoever holds it, e.g. stream tickets).
 */
export type Access = 'public' | 'public-or-admin' | 'admin' | 'device' | 'any-key';

export interface ResponseSpec {
  description: string;
  /** JSON schema of the body; omit for an empty body. */
  schema?: TSchema;
  /** Defaults to application/json when a schema is given. */
  contentType?: string;
}

type Input<S> = S extends TSchema ? Static<S> : undefined;

/** The device a `:deviceId` route is about, loaded once per request by the router. */
export interface RequestDevice {
  id: string;
  view: DeviceView;
  /** The session state now: the running actor's when this process has one, else the read model's. */
  sessionState(): string;
}

/** How the router finds the device of a request (the composition root wires the devices read model and the actors). */
export type DeviceLookup = (deviceId: string) => RequestDevice | undefined;

export interface HandlerInput<P, Q, B> {
  params: Input<P>;
  query: Input<Q>;
  body: Input<B>;
  /** The route's device (routes with `:deviceId` whose `device` is not 'none'); a missing one was answered 404 already. */
  device: RequestDevice;
  ctx: Context & { state: RequestState };
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteSpec<
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  B extends TSchema | undefined = TSchema | undefined,
> {
  method: HttpMethod;
  /** Koa style, e.g. /devices/:deviceId */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  /**
   * The scope a device key needs here (src/auth/scopes.ts gives the rule; `none` for public routes only). Required:
   * a route without one does not compile. A key without it is `403 insufficient_scope`; the admin key passes.
   */
  scope: RouteScope;
  /**
   * The route also takes a single-use stream ticket (`?ticket=`, POST /stream/tickets) instead of a key header:
   * a browser cannot send headers on a WebSocket.
   */
  acceptsTicket?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers it reads besides the keys (documented in /openapi.json; the handler checks them). */
  headers?: TSchema;
  /**
   * The route parses its own request body instead of the app's size-capped JSON parser (media sends:
   * bigger JSON, and multipart/form-data when `multipart`). `parse` runs after authentication and wraps
   * validation and the handler (so it can clean up after them); it leaves the fields in ctx.request.body.
   */
  bodyParser?: { parse: Middleware; multipart?: boolean };
  /**
   * Examples for /openapi.json where the one made from the schema (src/http/examples.ts) would not be a
   * sensible request or answer (e.g. a media send needs `url` or `base64`, which the schema cannot require).
   */
  examples?: { request?: unknown; responses?: Record<number, unknown> };
  /** The answers it may give, by status: each one's schema is checked in tests and documented in /openapi.json. */
  responses: Record<number, ResponseSpec>;
  /**
   * Routes with `:deviceId` load the device after authentication and answer 404 when it does not exist
   * ('live', the default); 'none' loads nothing (a deleted device's history is still readable).
   */
  device?: 'live' | 'none';
  /**
   * What the request reads ('latest' by default): the read models once they include everything the log held when it
   * arrived (src/projections/read-barrier.ts). 'as-they-are' waits for nothing: sends, answered at their commit (what
   * they read of earlier sends they wait for themselves); health and metrics, which report the lag itself; and routes
   * that read only read models no send changes (every other command is answered once the read models include it).
   */
  reads?: 'latest' | 'as-they-are';
  /** Left out of /openapi.json (the docs page's own assets). */
  hidden?: boolean;
  handler(input: HandlerInput<P, Q, B>): Promise<HandlerResult> | HandlerResult;
}

/** Keeps the handler's input types tied to the schemas it declares. */
export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec;
}
