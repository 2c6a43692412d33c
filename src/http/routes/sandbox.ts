/**
 * What the phone and the network do to a sandbox device (docs/api-guide.md, "Sessions and the sandbox engine"), for tests and
 * integrations without a phone. Admin only. Each group of routes is a file of its own; they share the owner calls
 * (sandbox-calls.ts).
 */
import type { RouteSpec } from '../route.js';
import { type SandboxRouteDeps, sandboxCalls } from './sandbox-calls.js';
import { sandboxActivityRoutes } from './sandbox-activity-routes.js';
import { sandboxInboundRoutes } from './sandbox-inbound-routes.js';
import { sandboxSessionRoutes } from './sandbox-session-routes.js';

export type { SandboxRouteDeps } from './sandbox-calls.js';

/** The sandbox's route groups, in the order /openapi.json lists them. */
const ROUTE_GROUPS = [sandboxSessionRoutes, sandboxInboundRoutes, sandboxActivityRoutes];

export function sandboxRoutes(deps: SandboxRouteDeps): RouteSpec[] {
  const calls = sandboxCalls(deps);
  return ROUTE_GROUPS.flatMap((routes) => routes(deps, calls));
}
