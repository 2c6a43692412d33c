import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startTestGateway } from '../../support/gateway.js';
import { bringOnline, createSandboxDevice, type TestDevice } from '../../support/sessions.js';
import { nodeArgumentsFor } from '../../support/entry-command.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

describe('MCP server (POST /mcp)', () => {
  let gateway: TestGateway;
  let device: TestDevice;
  const clients: Client[] = [];

  const connect = async (key: string) => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(client);
    return client;
  };
  const json = (result: Awaited<ReturnType<Client['callTool']>>) =>
    JSON.parse((result.content as Array<{ text: string }>)[0].text);

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
    device = await createSandboxDevice(gateway.api, 'mcp');
    await bringOnline(gateway.api, device, '4915100000001');
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await gateway.close();
  });

  it('lists the tools with input schemas taken from the routes', async () => {
    const client = await connect(device.key);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const name of [
      'list_devices',
      'get_session',
      'send_text',
      'list_chats',
      'read_chat',
      'get_message',
      'mark_read',
      'list_groups',
    ])
      expect(names).toContain(name);
    const sendText = tools.find((tool) => tool.name === 'send_text')!;
    expect(sendText.inputSchema.required).toEqual(expect.arrayContaining(['deviceId', 'to', 'text']));
    expect((sendText.inputSchema.properties as Record<string, { pattern?: string }>).deviceId.pattern).toBeDefined();
  });

  it('calls the same services as the routes: their JSON as results', async () => {
    const client = await connect(device.key);
    const session = await client.callTool({ name: 'get_session', arguments: { deviceId: device.id } });
    expect(session.isError).toBeFalsy();
    expect(json(session)).toEqual(
      (await gateway.api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key })).body,
    );

    const sent = await client.callTool({
      name: 'send_text',
      arguments: { deviceId: device.id, to: '4915122223333', text: 'from an agent' },
    });
    expect(sent.isError).toBeFalsy();
    // The route's 202 answer, the same fields as over HTTP.
    const overHttp = await gateway.api('POST', `/devices/${device.id}/send/text`, {
      deviceKey: device.key,
      json: { to: '4915122223333', text: 'over HTTP' },
    });
    expect(Object.keys(json(sent)).sort()).toEqual(Object.keys(overHttp.body).sort());
    expect(json(sent).outboxId).not.toBe(overHttp.body.outboxId);

    const admin = await connect(ADMIN_KEY);
    const devices = await admin.callTool({ name: 'list_devices', arguments: {} });
    expect(json(devices).items.map((d: { id: string }) => d.id)).toContain(device.id);
  });

  it('applies the key: scopes, its own device only, admin tools for the admin key', async () => {
    const made = await gateway.api('POST', `/devices/${device.id}/keys`, {
      deviceKey: device.key,
      json: { name: 'agent', scopes: ['read'] },
    });
    const reader = await connect(made.body.key);
    expect((await reader.callTool({ name: 'get_session', arguments: { deviceId: device.id } })).isError).toBeFalsy();
    const refused = await reader.callTool({
      name: 'send_text',
      arguments: { deviceId: device.id, to: '4915122223333', text: 'no' },
    });
    expect(refused.isError).toBe(true);
    expect(json(refused)).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'send' });

    const other = await createSandboxDevice(gateway.api, 'mcp-other');
    const elsewhere = await reader.callTool({ name: 'get_session', arguments: { deviceId: other.id } });
    expect(json(elsewhere)).toMatchObject({ status: 401, code: 'unauthorized' });
    const adminOnly = await reader.callTool({ name: 'list_devices', arguments: {} });
    expect(json(adminOnly)).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('send_media picks the media route by kind: the route’s answer, its fields, its scope', async () => {
    const client = await connect(device.key);
    const { tools } = await client.listTools();
    const tool = tools.find((candidate) => candidate.name === 'send_media')!;
    expect(tool.inputSchema.required).toEqual(expect.arrayContaining(['deviceId', 'kind', 'to', 'url']));
    const properties = tool.inputSchema.properties as Record<string, { enum?: string[] }>;
    expect(properties.kind.enum).toEqual(['image', 'audio', 'video', 'file', 'sticker']);
    expect(properties).not.toHaveProperty('base64');

    const url = 'https://example.com/media/invoice.pdf';
    const sent = await client.callTool({
      name: 'send_media',
      arguments: { deviceId: device.id, kind: 'file', to: '4915122223333', url, filename: 'invoice.pdf' },
    });
    expect(sent.isError).toBeFalsy();
    expect(json(sent)).toMatchObject({ status: 'queued', kind: 'file', to: '4915122223333' });
    const message = await gateway.api('GET', `/devices/${device.id}/messages/${json(sent).waMessageId}`, {
      deviceKey: device.key,
    });
    expect(message.body).toMatchObject({ type: 'file' });

    // A field of another kind's route, a kind that is none, no URL: the route's 400 as a tool error.
    for (const args of [
      { kind: 'image', to: '4915122223333', url, ptt: true },
      { kind: 'text', to: '4915122223333', url },
      { kind: 'image', to: '4915122223333' },
      { kind: 'image', to: '4915122223333', url, base64: 'AAAA' },
      { kind: 'file', to: '4915122223333', url },
    ]) {
      const bad = await client.callTool({ name: 'send_media', arguments: { deviceId: device.id, ...args } });
      expect(bad.isError, JSON.stringify(args)).toBe(true);
      expect(json(bad), JSON.stringify(args)).toMatchObject({ status: 400, code: 'invalid_request' });
    }

    const made = await gateway.api('POST', `/devices/${device.id}/keys`, {
      deviceKey: device.key,
      json: { name: 'media-reader', scopes: ['read'] },
    });
    const reader = await connect(made.body.key);
    const refused = await reader.callTool({
      name: 'send_media',
      arguments: { deviceId: device.id, kind: 'image', to: '4915122223333', url },
    });
    expect(json(refused)).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'send' });
  });

  it('answers bad input as a tool error with the route’s problem, and no key with 401', async () => {
    const client = await connect(device.key);
    const bad = await client.callTool({
      name: 'send_text',
      arguments: { deviceId: device.id, to: 'not a number', text: 'x' },
    });
    expect(bad.isError).toBe(true);
    expect(json(bad)).toMatchObject({ status: 400, code: 'invalid_request' });
    const unknown = await client.callTool({
      name: 'send_text',
      arguments: { deviceId: device.id, to: '4915122223333', text: 'x', extra: 1 },
    });
    expect(json(unknown)).toMatchObject({ status: 400, code: 'invalid_request' });

    const anonymous = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous.status).toBe(401);
  });
});

describe('npm run mcp (stdio)', () => {
  it('relays a desktop client over stdio to the gateway, with the key of GATEWAY_KEY', async () => {
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
    const device = await createSandboxDevice(gateway.api, 'mcp-stdio');
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    try {
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: nodeArgumentsFor('src/cli/mcp-stdio.ts'),
          env: { ...(process.env as Record<string, string>), GATEWAY_URL: gateway.url, GATEWAY_KEY: device.key },
          stderr: 'inherit',
        }),
      );
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('get_session');
      const session = await client.callTool({ name: 'get_session', arguments: { deviceId: device.id } });
      expect(session.isError).toBeFalsy();
      const admin = await client.callTool({ name: 'list_devices', arguments: {} });
      expect(JSON.parse((admin.content as Array<{ text: string }>)[0].text)).toMatchObject({ code: 'forbidden' });
    } finally {
      await client.close();
      await gateway.close();
    }
  });
});
