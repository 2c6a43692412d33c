/**
 * GET / DELETE /devices/:deviceId/outbox and DELETE /devices/:deviceId/outbox/:outboxId (docs/api-guide.md, "Sending and the outbox").
 */
import type { OutboxReadModel } from '../../outbox/read-models/outbox-read-model.js';
import type { SendCommands } from '../../outbox/commands/send-commands.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { invalidRequest } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { ListOutboxQuery, OutboxItemParams, OutboxListSchema, RemovedSchema } from '../schemas/outbox.js';

export interface OutboxRouteDeps {
  sends: SendCommands;
  outboxView: OutboxReadModel;
}

const tag = 'Outbox';
const NO_DEVICE = { description: 'No such device (admin key only).' };

export function outboxRoutes({ sends, outboxView }: OutboxRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/outbox',
      operationId: 'listOutbox',
      tag,
      summary: 'List the outbox',
      description:
        'Messages not yet accepted by the network, oldest first (the order they are sent in). Follow `nextCursor` until it is null.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      query: ListOutboxQuery,
      responses: { 200: { description: 'A page of the outbox.', schema: OutboxListSchema }, 404: NO_DEVICE },
      handler({ params, query }) {
        const page = outboxView.pending(params.deviceId, {
          limit: query.limit ?? 50,
          afterSeq: seqOf(decodeCursor(query.cursor)),
        });
        return {
          status: 200,
          body: {
            items: page.items,
            nextCursor: page.nextAfterSeq === null ? null : encodeCursor(String(page.nextAfterSeq)),
          },
        };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/outbox',
      operationId: 'clearOutbox',
      tag,
      summary: 'Clear the outbox',
      description: 'Removes every queued message (each becomes `cancelled`); messages being sent right now stay.',
      access: 'device',
      scope: 'send',
      params: DeviceParams,
      responses: { 200: { description: 'How many messages were removed.', schema: RemovedSchema }, 404: NO_DEVICE },
      async handler({ params }) {
        return { status: 200, body: { removed: await sends.clear(params.deviceId) } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/outbox/:outboxId',
      operationId: 'removeOutboxItem',
      tag,
      summary: 'Remove a message from the outbox',
      description:
        'The message becomes `cancelled` and is never sent. One that is not queued is `404`; one being sent right now is `409 message_sending`.',
      access: 'device',
      scope: 'send',
      params: OutboxItemParams,
      responses: {
        200: { description: 'Removed.', schema: RemovedSchema },
        404: { description: 'Not in the outbox (or no such device).' },
        409: { description: 'Being sent right now (`message_sending`).' },
      },
      async handler({ params }) {
        await sends.remove(params.deviceId, params.outboxId);
        return { status: 200, body: { removed: 1 } };
      },
    }),
  ];
}

function seqOf(after: string | undefined): number | undefined {
  if (after === undefined) return undefined;
  if (!/^\d{1,15}$/.test(after))
    throw invalidRequest('query/cursor is not a cursor this API gave out', [
      { path: '/cursor', message: 'is not a valid cursor' },
    ]);
  return Number(after);
}
