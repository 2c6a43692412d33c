/**
 * POST /mcp over the gateway's route list: its tools (McpTools) are made at the first call, from every route,
 * so the list given may still grow while the routes are assembled.
 */
import type { DeviceLookup, RouteSpec } from '../route.js';
import { mcpRoutes } from '../routes/mcp.js';
import { McpTools } from './mcp-tools.js';

export function mcpEndpoint(routes: readonly RouteSpec[], devices: DeviceLookup): RouteSpec[] {
  let tools: McpTools | undefined;
  return mcpRoutes(() => (tools ??= new McpTools(routes, devices)));
}
