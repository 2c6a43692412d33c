/**
 * The gateway as a Model Context Protocol server (docs/api-guide.md, "AI agents (MCP)"). Each tool is a route:
 * its input schema is the route's TypeBox schemas (path parameters, query and body merged into one object:
 * TypeBox schemas are JSON Schema), a call is validated and handled by the route's own validators and handler
 * (the same services, no HTTP inside the process), its result is the route's JSON and its errors the route's
 * problem codes. The key's access and scopes apply as they do over HTTP.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import type { TSchema } from 'typebox';
import type { Caller } from '../../auth/authenticator.js';
import { VERSION } from '../../version.js';
import { problemOf } from '../error-table.js';
import { Problem } from '../problem.js';
import type { DeviceLookup, RouteSpec } from '../route.js';
import { requireScope } from '../router.js';
import { compileValidator } from '../validation.js';
import { deviceNotFound } from '../../errors/domain-error.js';
import type { MediaKind } from '../../media/media-kinds.js';
import { SendMediaToolInput } from '../schemas/mcp.js';

/** Tool name → the route (operationId) it calls. Tools whose route this gateway lacks are left out. */
export const MCP_TOOLS: Readonly<Record<string, string>> = {
  list_devices: 'listDevices',
  get_session: 'getSessionState',
  send_text: 'sendText',
  list_chats: 'listChats',
  read_chat: 'listChatMessages',
  search_messages: 'searchMessages',
  get_message: 'getMessage',
  mark_read: 'readChat',
  list_groups: 'listGroups',
};

/** `send_media`'s route for each kind: the media routes are one per kind, the tool is one (SendMediaToolInput). */
const SEND_MEDIA_ROUTES: Readonly<Record<MediaKind, string>> = {
  image: 'sendImage',
  video: 'sendVideo',
  audio: 'sendAudio',
  file: 'sendFile',
  sticker: 'sendSticker',
};

interface Tool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  call(args: Record<string, unknown>, caller: Caller): Promise<unknown>;
}

export class McpTools {
  private readonly tools = new Map<string, Tool>();

  constructor(routes: readonly RouteSpec[], devices: DeviceLookup) {
    for (const [name, operationId] of Object.entries(MCP_TOOLS)) {
      const route = routes.find((candidate) => candidate.operationId === operationId);
      if (route) this.tools.set(name, toolOf(name, route, devices));
    }
    const sendMedia = sendMediaTool(routes, devices);
    if (sendMedia) this.tools.set(sendMedia.name, sendMedia);
  }

  /** An MCP server (one per request: the Streamable HTTP transport is used statelessly) acting for `caller`. */
  server(caller: Caller): Server {
    const server = new Server({ name: 'device-messaging-gateway', version: VERSION }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [...this.tools.values()].map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as { type: 'object' },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const tool = this.tools.get(request.params.name);
      if (!tool) return errorResult(new Problem(404, 'not_found', `no tool "${request.params.name}"`));
      try {
        const result = await tool.call(request.params.arguments ?? {}, caller);
        return { content: [{ type: 'text', text: JSON.stringify(result ?? null) }], structuredContent: { result } };
      } catch (error) {
        const problem = problemOf(error);
        if (!problem) throw error;
        return errorResult(problem);
      }
    });
    return server;
  }
}

function errorResult(problem: Problem) {
  const body = problem.toBody();
  return { isError: true, content: [{ type: 'text' as const, text: JSON.stringify(body) }] };
}

interface ObjectSchema {
  properties?: Record<string, unknown>;
  required?: string[];
}
const propertiesOf = (schema: unknown): Record<string, unknown> =>
  (schema as ObjectSchema | undefined)?.properties ?? {};
const requiredOf = (schema: unknown): string[] => (schema as ObjectSchema | undefined)?.required ?? [];

function toolOf(name: string, route: RouteSpec, devices: DeviceLookup): Tool {
  const parts = { params: route.params, query: route.query, body: route.body };
  const inputSchema = {
    type: 'object',
    properties: Object.assign({}, ...Object.values(parts).map(propertiesOf)) as Record<string, unknown>,
    required: [...new Set(Object.values(parts).flatMap(requiredOf))],
    additionalProperties: false,
  };
  const validators = {
    params: route.params ? compileValidator(route.params, 'params') : undefined,
    query: route.query ? compileValidator(route.query, 'query') : undefined,
    body: route.body ? compileValidator(route.body, 'body') : undefined,
  };
  const pick = (schema: TSchema | undefined, args: Record<string, unknown>) =>
    Object.fromEntries(
      Object.keys(propertiesOf(schema))
        .filter((k) => k in args)
        .map((k) => [k, args[k]]),
    );
  return {
    name,
    description:
      `${route.summary}. ${route.description ?? ''} Needs the \`${route.scope}\` scope${route.access === 'admin' ? ' and the admin key' : ''}.`.trim(),
    inputSchema,
    async call(args, caller) {
      const known = new Set(Object.keys(inputSchema.properties));
      const unknown = Object.keys(args).filter((key) => !known.has(key));
      if (unknown.length > 0)
        throw new Problem(400, 'invalid_request', `unknown argument ${unknown.join(', ')}`, {
          errors: unknown.map((key) => ({ path: `/${key}`, message: 'is not an argument of this tool' })),
        });
      authorize(route, caller, args);
      const params = validators.params?.parse(pick(route.params, args)) as Record<string, string> | undefined;
      // Query values arrive as text over HTTP: the validator reads numbers from them.
      const queryArgs = Object.fromEntries(
        Object.entries(pick(route.query, args)).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
      );
      const query = validators.query?.parse(queryArgs);
      const body = validators.body?.parse(pick(route.body, args));
      const deviceId = params?.deviceId;
      const device = deviceId === undefined ? undefined : devices(deviceId);
      if (deviceId !== undefined && !device && route.device !== 'none') throw deviceNotFound(deviceId);
      const result = await route.handler({
        params,
        query,
        body,
        device: device!,
        ctx: toolContext(caller),
      });
      if (result.status >= 400) throw new Problem(result.status, 'invalid_request', 'the route refused the call');
      return result.body;
    },
  };
}

/**
 * `send_media`: checked against SendMediaToolInput, then handed, without `kind`, to the tool of the kind's
 * route, which validates and handles it as that route does. Left out when this gateway lacks a media route.
 */
function sendMediaTool(routes: readonly RouteSpec[], devices: DeviceLookup): Tool | undefined {
  const byKind = new Map<string, { route: RouteSpec; tool: Tool }>();
  for (const [kind, operationId] of Object.entries(SEND_MEDIA_ROUTES)) {
    const route = routes.find((candidate) => candidate.operationId === operationId);
    if (!route) return undefined;
    byKind.set(kind, { route, tool: toolOf(`send_media/${kind}`, route, devices) });
  }
  const validator = compileValidator(SendMediaToolInput, 'body');
  const anyRoute = [...byKind.values()][0].route;
  return {
    name: 'send_media',
    description: `Send an image, video, audio, file or sticker by URL (fetched when the message is sent): calls the send route of its \`kind\`, with that route's fields, answers and problems. Needs the \`${anyRoute.scope}\` scope.`,
    inputSchema: SendMediaToolInput as unknown as Record<string, unknown>,
    async call(args, caller) {
      // The scope before the input, as over HTTP: every media route has the same access and scope.
      authorize(anyRoute, caller, args);
      validator.parse(args);
      const { kind, ...fields } = args;
      const { tool } = byKind.get(kind as string)!;
      const taken = new Set(Object.keys(tool.inputSchema.properties as Record<string, unknown>));
      const foreign = Object.keys(fields).filter((key) => !taken.has(key));
      if (foreign.length > 0)
        throw new Problem(400, 'invalid_request', `${foreign.join(', ')} is not an argument of kind ${String(kind)}`, {
          errors: foreign.map((key) => ({ path: `/${key}`, message: `is not an argument of kind ${String(kind)}` })),
        });
      // The arguments as given: the kind's route reads numbers and checks them itself.
      return tool.call(fields, caller);
    },
  };
}

/** The route's access for an MCP caller: admin routes need the admin key, device routes the device's own key. */
function authorize(route: RouteSpec, caller: Caller, args: Record<string, unknown>): void {
  if (route.access === 'admin' && caller.kind !== 'admin')
    throw new Problem(403, 'forbidden', 'this key may not use this tool');
  if (route.access === 'device' && caller.kind === 'device' && args.deviceId !== caller.deviceId)
    throw new Problem(401, 'unauthorized', 'a key of this device is required');
  if (route.scope !== 'none') requireScope(caller, route.scope);
}

/** What a handler reads of its request: the caller, and no headers (no Idempotency-Key: each call is its own). */
function toolContext(caller: Caller): Context {
  return {
    state: { caller },
    get: () => '',
    query: {},
    method: 'POST',
    request: {},
    headers: {},
  } as unknown as Context;
}
