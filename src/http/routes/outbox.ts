/**
 * GET / DELETE /devices/:deviceId/outbox and DELETE /devices/:deviceId/outbox/:outboxId (docs/api-guide.md, "Sending and the outbox").
 */
import type { MessageIndex } from '../../chats/message-index.js';
import type { OutboxReadModel } from '../../outbox/read-models/outbox-read-model.js';
import type { SendCommands } from '../../outbox/commands/send-commands.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { invalidRequest } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  ListOutboxQuery,
  OutboxItemParams,
  OutboxListSchema,
  PREVIEW_LENGTH,
  RemovedSchema,
} from '../schemas/outbox.js';

export interface OutboxRouteDeps {
  sends: SendCommands;
  outboxView: OutboxReadModel;
  /** The message index: the texts of the items. */
  messages: Pick<MessageIndex, 'bodies'>;
  /** Pacing: until when the device's queued messages wait (epoch ms), if they do. */
  deferredUntil?: (deviceId: string) => Promise<number | undefined>;
}

const tag = 'Outbox';
const NO_DEVICE = { description: 'No such device (admin key only).' };

export function outboxRoutes({ sends, outboxView, messages, deferredUntil }: OutboxRouteDeps): RouteSpec[] {
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
      async handler({ params, query }) {
        const page = outboxView.pending(params.deviceId, {
          limit: query.limit ?? 50,
          afterSeq: seqOf(decodeCursor(query.cursor)),
        });
        const texts = messages.bodies(
          params.deviceId,
          page.items.map((item) => item.waMessageId),
        );
        const until = await deferredUntil?.(params.deviceId);
        const deferred = until === undefined ? undefined : new Date(until).toISOString();
        return {
          status: 200,
          body: {
            items: page.items.map((item) => {
              const text = texts.get(item.waMessageId);
              const shown = text ? { ...item, text: preview(text) } : item;
              return deferred && item.status === 'queued' && item.attempts === 0
                ? { ...shown, deferredUntil: deferred }
                : shown;
            }),
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

/** The first PREVIEW_LENGTH characters, not cutting a character of two UTF-16 units in half. */
function preview(text: string): string {
  if (text.length <= PREVIEW_LENGTH) return text;
  const end = /[\uD800-\uDBFF]/.test(text[PREVIEW_LENGTH - 1] ?? '') ? PREVIEW_LENGTH - 1 : PREVIEW_LENGTH;
  return text.slice(0, end);
}
