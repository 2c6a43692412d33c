import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpTools } from '../mcp/mcp-tools.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { McpAnswerSchema, McpBody } from '../schemas/mcp.js';

export function mcpRoutes(tools: () => McpTools): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/mcp',
      operationId: 'mcp',
      tag: 'AI agents (MCP)',
      summary: 'Model Context Protocol server (Streamable HTTP)',
      description:
        'JSON-RPC messages of the Model Context Protocol (stateless Streamable HTTP transport), with a device key or the admin key as `Authorization: Bearer`. Tools: list_devices (admin), get_session, send_text, send_media (by URL, the route picked by `kind`), list_chats, read_chat, search_messages, get_message, mark_read, list_groups: each calls its route, with its input schema, its JSON result and its problem codes as tool errors. The key’s scopes apply to each tool.',
      access: 'any-key',
      scope: 'read',
      body: McpBody,
      examples: { request: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
      responses: {
        // Written by the transport itself (ctx.respond = false): documented, not checked by the router.
        200: { description: 'The JSON-RPC answer.', schema: McpAnswerSchema, contentType: 'application/json' },
        202: { description: 'A notification or answer was taken.' },
        400: { description: 'The body is not a JSON-RPC 2.0 message (`invalid_request`).' },
      },
      async handler({ ctx, body }) {
        const caller = ctx.state.caller;
        if (!caller) throw new Error('mcp runs with a caller');
        // What the SDK would refuse in a JSON-RPC error of its own was refused by the body schema, as any bad input is (problem+json).
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
