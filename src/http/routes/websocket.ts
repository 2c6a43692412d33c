/**
 * The live event stream over WebSocket (docs/api-guide.md, "WebSocket"): the same hub, the same semantics as
 * the SSE routes (exact resume by `?after=`, slow clients cut and resumed, the key's rotation or deletion
 * ending it), one JSON message per event. Authenticated by a key header on the upgrade request or by a
 * single-use ticket (`POST /stream/tickets`), since a browser cannot send headers on a WebSocket.
 */
import type { Duplex } from 'node:stream';
import type { Context } from 'koa';
import Type from 'typebox';
import { WebSocket, WebSocketServer } from 'ws';
import { PRIMARY_KEY_ID } from '../../auth/authenticator.js';
import { StreamTickets, TICKET_TTL_MS } from '../../auth/stream-tickets.js';
import type { EventStreamHub, StreamFilter, StreamSink } from '../../stream/event-stream-hub.js';
import { upgradeOf } from '../http-server.js';
import { Problem, invalidRequest } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams, Timestamp } from '../schemas/common.js';
import { StreamQuery } from '../schemas/stream.js';
import { kindsOf, resumePoint } from './stream.js';

const tag = 'Live event stream';

const WsQuery = Type.Object({
  ...StreamQuery.properties,
  ticket: Type.Optional(
    Type.String({
      minLength: 1,
      // A signed ticket carries its caller (src/auth/stream-tickets.ts): a few hundred characters.
      maxLength: 1_000,
      description: 'A ticket from `POST /stream/tickets` (single use, 30 s), instead of a key header.',
    }),
  ),
});

const TicketSchema = Type.Object({
  ticket: Type.String({
    pattern: '^st_[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
    description:
      'Pass it as `?ticket=`: once, within 30 s, to any process or machine of the gateway (signed, and used up on the log).',
    examples: [
      'st_eyJpZCI6IkJ3a1BfRjN5NGNRMl9aeHRWRUVOcUEiLCJleHAiOjE3OTU4MjgwMDAwMDAsImNhbGxlciI6eyJraW5kIjoiYWRtaW4ifX0.3p8mYlM0bZ1m2H0v9F4b6Vq6bUe9Tn4tKkC8rZ7xW1s',
    ],
  }),
  expiresAt: Timestamp,
});

const WS_DESCRIPTION =
  'A WebSocket (`Upgrade: websocket`); a plain request is `426 upgrade_required`. Each message is one event as JSON: the webhook envelope ' +
  '(`{ id, event, deviceId, timestamp, data }`) with `id` its position in the log and `eventId` the envelope id. `?after=<id>` resumes ' +
  'right after that position, exactly as the SSE stream does (what was missed, from the log, then live); `?events=` picks kinds. ' +
  'Authenticated by the key header on the upgrade request, or by `?ticket=` from `POST /stream/tickets` (browsers): keys never go in URLs. ' +
  'A ping every `STREAM_HEARTBEAT`; a client too far behind is disconnected and resumes by id; a stream opened with a device key closes ' +
  '(1008) when that key is rotated or deleted or the device deleted.';

const UPGRADE_ANSWERS = {
  101: { description: 'Switching to the WebSocket protocol: from here on, one message per event.' },
  200: {
    description:
      'Never answered: the connection switches protocols (101). Listed because OpenAPI cannot describe a WebSocket otherwise.',
  },
  400: { description: 'A bad `after` or `events`, or a bad WebSocket handshake (`invalid_request`).' },
  426: { description: 'Not a WebSocket upgrade request (`upgrade_required`).' },
};

export function webSocketRoutes(hub: EventStreamHub, tickets: StreamTickets): RouteSpec[] {
  const server = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 4096 });
  return [
    defineRoute({
      method: 'post',
      path: '/stream/tickets',
      operationId: 'createStreamTicket',
      tag,
      summary: 'Get a single-use ticket to open a WebSocket',
      description: `For browsers, which cannot send headers on a WebSocket: the ticket stands for the key that asked for it (the admin key or a device key with \`read\`), for one connection, within ${TICKET_TTL_MS / 1000} s. Pass it as \`?ticket=\` to \`GET /ws\` or \`GET /devices/{deviceId}/ws\`.`,
      access: 'any-key',
      scope: 'read',
      responses: { 201: { description: 'The ticket.', schema: TicketSchema } },
      handler({ ctx }) {
        const caller = ctx.state.caller;
        if (!caller) throw new Error('createStreamTicket runs with a caller');
        return { status: 201, body: tickets.issue(caller), headers: { 'Cache-Control': 'no-store' } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/ws',
      operationId: 'webSocketDeviceEvents',
      tag,
      summary: "Listen to a device's events over a WebSocket (resumable)",
      description: WS_DESCRIPTION,
      access: 'device',
      scope: 'read',
      acceptsTicket: true,
      params: DeviceParams,
      query: WsQuery,
      responses: { ...UPGRADE_ANSWERS, 404: { description: 'No such device (admin key only).' } },
      async handler({ params, query, ctx }) {
        const caller = ctx.state.caller;
        const key =
          caller?.kind === 'device'
            ? { deviceKeyHash: caller.keyHash, primaryKey: caller.keyId === PRIMARY_KEY_ID }
            : {};
        const filter = { deviceId: params.deviceId, kinds: kindsOf(query.events), ...key };
        await upgrade(server, hub, ctx, filter, await resumePoint(hub, ctx, query.after));
        return { status: 101 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/ws',
      operationId: 'webSocketAllEvents',
      tag,
      summary: "Listen to every device's events over a WebSocket (resumable)",
      description: WS_DESCRIPTION,
      access: 'admin',
      scope: 'read',
      acceptsTicket: true,
      query: WsQuery,
      responses: UPGRADE_ANSWERS,
      async handler({ query, ctx }) {
        await upgrade(server, hub, ctx, { kinds: kindsOf(query.events) }, await resumePoint(hub, ctx, query.after));
        return { status: 101 };
      },
    }),
  ];
}

async function upgrade(
  server: WebSocketServer,
  hub: EventStreamHub,
  ctx: Context,
  filter: StreamFilter,
  after: number | undefined,
): Promise<void> {
  const pending = upgradeOf(ctx.req);
  if (!pending || (ctx.get('upgrade') ?? '').toLowerCase() !== 'websocket')
    throw new Problem(426, 'upgrade_required', 'this route takes a WebSocket upgrade (Upgrade: websocket)', {
      headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
    });
  // ws answers a bad handshake itself, without calling back: checked here, it is a problem+json like any other.
  checkHandshake(ctx);
  // Koa leaves the response alone from here: the socket is the WebSocket's.
  ctx.respond = false;
  ctx.res.detachSocket(pending.socket as never);
  const ws = await handleUpgrade(server, ctx, pending);
  if (!ws) return;
  (pending.socket as { setNoDelay?(on: boolean): void }).setNoDelay?.(true);
  hub.open(new WebSocketSink(ws, pending.socket), { ...filter, format: 'json-lines' }, after);
}

/** ws's own rule for the key: 16 bytes in base64 (RFC 6455, 4.2.1). */
const HANDSHAKE_KEY = /^[+/0-9A-Za-z]{22}==$/;
const HANDSHAKE_VERSIONS = new Set(['8', '13']);

function checkHandshake(ctx: Context): void {
  if (!HANDSHAKE_KEY.test(ctx.get('sec-websocket-key')))
    throw invalidRequest('Sec-WebSocket-Key must be 16 bytes in base64', [
      { path: '/headers/sec-websocket-key', message: 'must be 16 bytes in base64' },
    ]);
  if (!HANDSHAKE_VERSIONS.has(ctx.get('sec-websocket-version').trim()))
    throw new Problem(400, 'invalid_request', 'Sec-WebSocket-Version must be 13 (or 8)', {
      errors: [{ path: '/headers/sec-websocket-version', message: 'must be 13 or 8' }],
      headers: { 'Sec-WebSocket-Version': '13, 8' },
    });
}

/**
 * The WebSocket, or undefined when the handshake ended without one: ws never calls back when the socket closed
 * before it could answer (it destroys the socket), so the socket's close ends the wait as well.
 */
function handleUpgrade(
  server: WebSocketServer,
  ctx: Context,
  pending: { socket: Duplex; head: Buffer },
): Promise<WebSocket | undefined> {
  const { socket, head } = pending;
  if (socket.destroyed || !socket.readable || !socket.writable) {
    socket.destroy();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const closed = () => resolve(undefined);
    socket.once('close', closed);
    server.handleUpgrade(ctx.req, socket, head, (ws) => {
      socket.off('close', closed);
      resolve(ws);
    });
  });
}

/**
 * The hub's sink over a WebSocket: the hub writes one line of JSON per event (`json-lines`), each sent as a
 * message; its keep-alive comments become pings. What is still unsent is the WebSocket's buffered amount.
 */
class WebSocketSink implements StreamSink {
  constructor(
    private readonly ws: WebSocket,
    private readonly socket: { once(e: 'drain', l: () => void): unknown; off(e: 'drain', l: () => void): unknown },
  ) {
    // A client's messages are not read (a stream goes one way); errors end the connection.
    ws.on('error', () => ws.terminate());
  }

  write(chunk: string | Uint8Array): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return true;
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (line.startsWith(':')) this.ws.ping();
      else this.ws.send(line);
    }
    return this.ws.bufferedAmount === 0;
  }

  get writableLength(): number {
    return this.ws.bufferedAmount;
  }

  get destroyed(): boolean {
    return this.ws.readyState === WebSocket.CLOSED;
  }

  destroy(): void {
    this.ws.terminate();
  }

  /** The key no longer holds: what was sent leaves, then a close frame says why. */
  destroySoon(): void {
    this.ws.close(1008, 'the key no longer holds');
  }

  resetAndDestroy(): void {
    this.ws.terminate();
  }

  once(event: 'drain' | 'close', listener: () => void): unknown {
    if (event === 'drain') return this.socket.once('drain', listener);
    return this.ws.once('close', listener);
  }

  off(event: 'drain' | 'close', listener: () => void): unknown {
    if (event === 'drain') return this.socket.off('drain', listener);
    return this.ws.off('close', listener);
  }
}
