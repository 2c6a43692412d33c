/**
 * `npm run mcp`: the gateway's MCP server over stdio, for desktop AI clients that start a command. It relays
 * each request to a running gateway's `POST /mcp` (GATEWAY_URL, default http://127.0.0.1:3000) with the key in
 * GATEWAY_KEY (a device key, a scoped key or the admin key), so the tools, their schemas, results, errors and
 * the key's scopes are exactly those of the gateway. Logs go to stderr: stdout is the protocol's.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../version.js';

interface StdioSettings {
  url: string;
  key: string;
}

function settingsFrom(env: NodeJS.ProcessEnv): StdioSettings {
  const key = env.GATEWAY_KEY?.trim();
  if (!key) throw new Error('GATEWAY_KEY must be set: a device key, a scoped key or the admin key');
  const url = env.GATEWAY_URL?.trim() || 'http://127.0.0.1:3000';
  try {
    new URL('/mcp', url);
  } catch {
    throw new Error(`GATEWAY_URL is not a URL: ${url}`);
  }
  return { url, key };
}

async function relayOverStdio(settings: StdioSettings): Promise<void> {
  const gateway = new Client({ name: 'dmg-mcp-stdio', version: VERSION });
  await gateway.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', settings.url), {
      requestInit: { headers: { Authorization: `Bearer ${settings.key}` } },
    }),
  );
  const server = new Server({ name: 'device-messaging-gateway', version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => gateway.listTools(request.params));
  server.setRequestHandler(CallToolRequestSchema, (request) => gateway.callTool(request.params));
  await server.connect(new StdioServerTransport());
}

relayOverStdio(settingsFrom(process.env)).catch((error: unknown) => {
  process.stderr.write(`mcp: ${(error as Error).message}\n`);
  process.exit(1);
});
