import type { Context } from 'koa';
import { PRIMARY_KEY_ID } from '../../auth/authenticator.js';
import type { EventStreamHub } from '../../stream/event-stream-hub.js';
import { invalidRequest } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { STREAM_DESCRIPTION, StreamQuery, StreamResponse } from '../schemas/stream.js';

const tag = 'Live event stream';

export function streamRoutes(hub: EventStreamHub): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/stream',
      operationId: 'streamDeviceEvents',
      tag,
      summary: "Listen to a device's events (server-sent events, resumable)",
      description: `${STREAM_DESCRIPTION} A stream opened with a device key ends when that key is rotated or deleted, or the device deleted (the old key stops working at once).`,
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      query: StreamQuery,
      responses: { 200: StreamResponse, 400: PAST_THE_LOG, 404: { description: 'No such device (admin key only).' } },
      async handler({ params, query, ctx }) {
        const caller = ctx.state.caller;
        // A device key's stream ends when that key is rotated out or the device deleted ("the old key stops working at once").
        const key =
          caller?.kind === 'device'
            ? { deviceKeyHash: caller.keyHash, primaryKey: caller.keyId === PRIMARY_KEY_ID }
            : {};
        open(
          hub,
          ctx,
          { deviceId: params.deviceId, kinds: kindsOf(query.events), ...key },
          await resumePoint(hub, ctx, query.after),
        );
        return { status: 200 };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/stream',
      operationId: 'streamAllEvents',
      tag,
      summary: "Listen to every device's events (server-sent events, resumable)",
      description: STREAM_DESCRIPTION,
      access: 'admin',
      scope: 'read',
      query: StreamQuery,
      responses: { 200: StreamResponse, 400: PAST_THE_LOG },
      async handler({ query, ctx }) {
        open(hub, ctx, { kinds: kindsOf(query.events) }, await resumePoint(hub, ctx, query.after));
        return { status: 200 };
      },
    }),
  ];
}

export const kindsOf = (events: string | undefined) => (events ? new Set(events.split(',')) : undefined);

const PAST_THE_LOG = {
  description:
    "A malformed `after` or `Last-Event-ID`, or one that is no event's position in this log, e.g. past its end (`invalid_request`): " +
    'the client followed another log (a restored or replaced data directory, another store); connect again without it.',
};

/**
 * `Last-Event-ID` (what EventSource sends when it reconnects) wins over `?after=`, which names where the first
 * connection began. A position past the end of the log is refused: followed, it would get nothing, silently.
 */
export async function resumePoint(
  hub: EventStreamHub,
  ctx: Context,
  after: number | undefined,
): Promise<number | undefined> {
  const header = ctx.get('last-event-id').trim();
  const [position, path] = header === '' ? [after, '/after'] : [Number(header), '/headers/last-event-id'];
  if (header !== '' && (!/^\d{1,16}$/.test(header) || !Number.isSafeInteger(position))) {
    const message = 'must be a log position (the id: of an event received)';
    throw invalidRequest(`headers/last-event-id ${message}`, [{ path, message }]);
  }
  if (position !== undefined && !(await hub.isEventPosition(position))) {
    const message =
      'is not the position of an event of this log (past its end, or inside a record): the client followed another one (a restored or replaced data directory, another store); connect again without it';
    throw invalidRequest(`${path.slice(1)} ${message}`, [{ path, message }]);
  }
  return position;
}

const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
};

function open(
  hub: EventStreamHub,
  ctx: Context,
  filter: Parameters<EventStreamHub['open']>[1],
  after: number | undefined,
): void {
  // HEAD: the headers a GET would get, and no stream (the hub would write to the socket past the response).
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.set(STREAM_HEADERS);
    return;
  }
  // Koa leaves the response alone from here: the hub writes to it until either side closes it.
  ctx.respond = false;
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setKeepAlive(true);
  // The body ends when the connection does: no chunk framing around every event (a third of the cost of a
  // write to a thousand clients), and Node answers `Connection: close`.
  ctx.res.useChunkedEncodingByDefault = false;
  ctx.res.writeHead(200, STREAM_HEADERS);
  // How long EventSource waits before it reconnects (with Last-Event-ID).
  ctx.res.write('retry: 1000\n\n');
  // From here the body is bytes on the connection until it closes, so the hub writes to the socket itself:
  // the response's own write would add a cork, a deferred uncork and its checks to each of a thousand writes.
  const socket = ctx.res.socket;
  if (!socket || socket.destroyed) return;
  hub.open(socket, filter, after);
}
