import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpTools } from '../mcp/mcp-tools.js';
import { invalidRequest } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';

/** A JSON-RPC 2.0 message (a request, a notification or a response), as the transport takes them. */
const isJsonRpc = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  (value as { jsonrpc?: unknown }).jsonrpc === '2.0' &&
  (typeof (value as { method?: unknown }).method === 'string' || 'id' in value);

export function mcpRoutes(tools: () => McpTools): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/mcp',
      operationId: 'mcp',
      tag: 'AI agents (MCP)',
      summary: 'Model Context Protocol server (Streamable HTTP)',
      description:
        'JSON-RPC messages of the Model Context Protocol (stateless Streamable HTTP transport), with a device key or the admin key as `Authorization: Bearer`. Tools: list_devices (admin), get_session, send_text, list_chats, read_chat, get_message, mark_read, list_groups: each calls the route of the same name, with its input schema, its JSON result and its problem codes as tool errors. The key’s scopes apply to each tool.',
      access: 'any-key',
      scope: 'read',
      responses: {
        200: { description: 'The JSON-RPC answer (JSON or an event stream, as the client accepts).' },
        202: { description: 'A notification or answer was taken.' },
        400: { description: 'The body is not a JSON-RPC 2.0 message (`invalid_request`).' },
      },
      async handler({ ctx }) {
        const caller = ctx.state.caller;
        if (!caller) throw new Error('mcp runs with a caller');
        // What the SDK would refuse in a JSON-RPC error of its own is refused here as any bad input is (problem+json).
        const body = (ctx.request as { body?: unknown }).body;
        const messages = Array.isArray(body) ? body : [body];
        if (messages.length === 0 || !messages.every(isJsonRpc))
          throw invalidRequest('body must be a JSON-RPC 2.0 message (or a batch of them)', [
            { path: '/', message: 'is not a JSON-RPC 2.0 message' },
          ]);
        // Answers are JSON (enableJsonResponse); the transport still asks the client to accept both kinds.
        ctx.req.headers.accept = 'application/json, text/event-stream';
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        const server = tools().server(caller);
        await server.connect(transport);
        ctx.respond = false;
        ctx.res.on('close', () => {
          void transport.close();
          void server.close();
        });
        await transport.handleRequest(ctx.req, ctx.res, body);
        return { status: ctx.res.statusCode === 202 ? 202 : 200 };
      },
    }),
  ];
}
