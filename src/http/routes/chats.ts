/**
 * Conversations (GET /devices/:deviceId/chats, …/chats/:chatId/messages), read from the message index;
 * read receipts and presence (POST /devices/:deviceId/chats/:chatId/read, …/chats/:chatId/presence,
 * …/presence): sent at once through the live connection, never queued; they need an online session.
 */
import type { ChatCommands } from '../../chats/chat-commands.js';
import type { MessageIndex } from '../../chats/message-index.js';
import type { MessageView, PageKey } from '../../chats/message-views.js';
import { encodeCursor, decodeCursor } from '../cursor.js';
import { invalidRequest } from '../problem.js';
import { type RequestDevice, type RouteSpec, defineRoute } from '../route.js';
import { ChatListSchema, ChatMessagesParams, MessagePageSchema, PageQuery } from '../schemas/chats.js';
import { DeviceParams } from '../schemas/common.js';
import { ChatParams, ChatPresenceBody, PresenceBody, PresenceSchema, ReadBody, ReadSchema } from '../schemas/send.js';
import { NOT_ONLINE } from './responses.js';

const tag = 'Chats';

/** Said on every conversation route: these are read models of the log, not the phone's history. */
export const ONLY_WHAT_THE_GATEWAY_SAW =
  'Only what the gateway saw: messages this device sent through the gateway or received while it was connected to it. ' +
  'Nothing is fetched from the phone (no history sync): older messages, and messages sent or received while no gateway ran, are not shown.';

/** A page key as a cursor, and back (a cursor not given out here is `400 invalid_request`). */
export const pageCursor = (key: PageKey | null): string | null => (key ? encodeCursor(`${key.at}:${key.pos}`) : null);

export function pageKeyOf(cursor: string | undefined): PageKey | undefined {
  const raw = decodeCursor(cursor);
  if (raw === undefined) return undefined;
  const match = /^(-?\d{1,15}):(\d{1,17})$/.exec(raw);
  if (!match)
    throw invalidRequest('query/cursor is not a cursor this API gave out', [
      { path: '/cursor', message: 'is not a valid cursor' },
    ]);
  return { at: Number(match[1]), pos: Number(match[2]) };
}

/** This account's own messages name its number, when the session knows it. */
export function withOwnNumber<T extends Pick<MessageView, 'from' | 'fromMe' | 'reactions'>>(
  device: RequestDevice,
  message: T,
): T {
  const phone = device.view.session.phone;
  if (!phone) return message;
  const reactions = message.reactions.some((r) => r.fromMe)
    ? message.reactions.map((r) => (r.fromMe ? { ...r, from: phone } : r))
    : message.reactions;
  return { ...message, ...(message.fromMe ? { from: phone } : {}), reactions };
}

export function chatRoutes({
  chats,
  index,
}: {
  /** With several processes, served by the device's owner (src/cluster/owner-calls.ts). */
  chats: Pick<ChatCommands, 'read' | 'presence'>;
  index: Pick<MessageIndex, 'chats' | 'messages'>;
}): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/chats',
      operationId: 'listChats',
      tag,
      summary: 'List chats',
      description:
        'Every chat the device sent to or received from, most recent activity first, with its last message and unread count ' +
        '(received messages not yet marked read by this device through `POST /chats/:chatId/read`). Follow `nextCursor` until it is null; ' +
        'a chat with a new message moves to the top (it shows on a fresh first page). ' +
        ONLY_WHAT_THE_GATEWAY_SAW,
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      query: PageQuery,
      responses: {
        200: { description: 'A page of chats.', schema: ChatListSchema },
        404: { description: 'No such device.' },
      },
      handler({ params, query }) {
        const page = index.chats(params.deviceId, { limit: query.limit ?? 50, after: pageKeyOf(query.cursor) });
        return { status: 200, body: { items: page.items, nextCursor: pageCursor(page.next) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/chats/:chatId/messages',
      operationId: 'listChatMessages',
      tag,
      summary: "List a chat's messages",
      description:
        "The chat's messages, newest first (by their timestamp), with reactions, edits, revokes, quotes and media references; reactions are shown on their " +
        'message, not listed. Paging is by key: messages that arrive while you page show on a fresh first page, never twice or in place of others, ' +
        'and a chat with 100,000 messages pages as fast as one with ten. A chat the device never saw is an empty page. ' +
        ONLY_WHAT_THE_GATEWAY_SAW,
      access: 'device',
      scope: 'read',
      params: ChatMessagesParams,
      query: PageQuery,
      responses: {
        200: { description: 'A page of messages.', schema: MessagePageSchema },
        404: { description: 'No such device.' },
      },
      handler({ params, query, device }) {
        const page = index.messages(params.deviceId, params.chatId, {
          limit: query.limit ?? 50,
          after: pageKeyOf(query.cursor),
        });
        return {
          status: 200,
          body: { items: page.items.map((m) => withOwnNumber(device, m)), nextCursor: pageCursor(page.next) },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/chats/:chatId/read',
      operationId: 'readChat',
      tag,
      summary: 'Send read receipts',
      description:
        'Read receipts for received messages of the chat not read yet: those in `messageIds`, or every unread one when it is left out (reactions are shown on ' +
        'their message and get none). Recorded (ChatRead) before they are sent; `read` says how many were marked. ' +
        'A `messageIds` entry that is not a received message of this chat: `404 message_not_found`.',
      access: 'device',
      scope: 'send',
      params: ChatParams,
      body: ReadBody,
      responses: {
        200: { description: 'How many messages were marked read.', schema: ReadSchema },
        404: { description: 'No such device, or a message not received in this chat (`message_not_found`).' },
        409: NOT_ONLINE,
      },
      async handler({ params, body }) {
        return { status: 200, body: { read: await chats.read(params.deviceId, params.chatId, body.messageIds) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/chats/:chatId/presence',
      operationId: 'chatPresence',
      tag,
      summary: 'Show typing or recording in a chat',
      description: '`typing`, `recording` or `paused`, shown to the chat at once (not queued).',
      access: 'device',
      scope: 'send',
      params: ChatParams,
      body: ChatPresenceBody,
      responses: {
        200: { description: 'Sent.', schema: PresenceSchema },
        404: { description: 'No such device.' },
        409: NOT_ONLINE,
      },
      async handler({ params, body }) {
        await chats.presence(params.deviceId, body.state, params.chatId);
        return { status: 200, body: { state: body.state } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/presence',
      operationId: 'presence',
      tag,
      summary: "Set the account's availability",
      description: '`available` or `unavailable`, at once (not queued).',
      access: 'device',
      scope: 'send',
      params: DeviceParams,
      body: PresenceBody,
      responses: {
        200: { description: 'Sent.', schema: PresenceSchema },
        404: { description: 'No such device.' },
        409: NOT_ONLINE,
      },
      async handler({ params, body }) {
        await chats.presence(params.deviceId, body.state);
        return { status: 200, body: { state: body.state } };
      },
    }),
  ];
}
