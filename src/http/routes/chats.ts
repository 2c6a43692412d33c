/**
 * Conversations (GET /devices/:deviceId/chats, …/chats/:chatId/messages), read from the message index;
 * read receipts and presence (POST /devices/:deviceId/chats/:chatId/read, …/chats/:chatId/presence,
 * …/presence): sent at once through the live connection, never queued; they need an online session.
 */
import type { ChatCommands } from '../../chats/chat-commands.js';
import type { MessageIndex } from '../../chats/message-index.js';
import { type MessageView, type PageKey, withOwnPhone } from '../../chats/message-views.js';
import { encodeCursor, decodeCursor } from '../cursor.js';
import { entityTag, noneMatch } from '../conditional.js';
import type { MessageIndexReads } from '../../chats/message-index-reads.js';
import type { ReaderThreads } from '../../storage/reader-threads.js';
import { PrebuiltJson } from '../json-text.js';
import { invalidRequest } from '../problem.js';
import { type HandlerInput, type RequestDevice, type RouteSpec, defineRoute } from '../route.js';
import {
  ChatDeletedSchema,
  ChatListQuery,
  ChatListSchema,
  ChatMessagesParams,
  ChatPatchBody,
  ConditionalHeaders,
  ChatSchema,
  SearchQuery,
  DeleteForMeQuery,
  DoneSchema,
  HistoryFetchBody,
  HistoryRequestedSchema,
  MessagePageSchema,
  PageQuery,
  PinBody,
  PinSchema,
  StarSchema,
} from '../schemas/chats.js';
import { DeviceParams } from '../schemas/common.js';
import {
  ChatParams,
  ChatPresenceBody,
  MessageParams,
  PresenceBody,
  PresenceSchema,
  ReadBody,
  ReadSchema,
} from '../schemas/send.js';
import { DomainError } from '../../errors/domain-error.js';
import { NOT_ONLINE } from './responses.js';

const tag = 'Chats';

/** Said on every conversation route: these are read models of the log, not the phone itself. */
export const ONLY_WHAT_THE_GATEWAY_SAW =
  'Only what the gateway holds: messages this device sent through the gateway or received while it was connected to it, and the history ' +
  'the phone sent (history sync when the device linked, as the `historySync` setting says, and `POST /chats/:chatId/history`, marked `historical`).';

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
  return withOwnPhone(device.view.session.phone, message);
}

export function chatRoutes({
  chats,
  index,
  reads,
  now = Date.now,
}: {
  /** With several processes, served by the device's owner (src/cluster/owner-calls.ts). */
  chats: Pick<
    ChatCommands,
    'read' | 'presence' | 'modify' | 'remove' | 'star' | 'pin' | 'deleteForMe' | 'fetchHistory'
  >;
  index: Pick<MessageIndex, 'chatsJson' | 'chat' | 'message' | 'search' | 'stateTag'>;
  /** Chat pages, run on the reader threads (src/storage/reader-threads.ts). */
  reads: Pick<ReaderThreads<MessageIndexReads>, 'run'>;
  /** The gateway's clock (src/time/clock.ts), as ChatCommands has it. */
  now?: () => number;
}): RouteSpec[] {
  const CHAT_NOT_FOUND = { description: 'No such device, or the device has no such chat (`chat_not_found`).' };
  const MESSAGE_NOT_FOUND = { description: 'No such device or message (`message_not_found`).' };
  const NOT_MODIFIED = { description: "Not modified: `If-None-Match` names this answer's current `ETag` (no body)." };
  /** The answer's entity tag (none while the read models cannot be tagged), and whether the client holds it already. */
  const conditional = (ctx: HandlerInput<undefined, undefined, undefined>['ctx'], ...shown: string[]) => {
    const version = index.stateTag();
    const tag = version === undefined ? undefined : entityTag(version, ...shown);
    return { tag, fresh: tag !== undefined && noneMatch(ctx.get('if-none-match'), tag) };
  };
  const messageAfter = (deviceId: string, waMessageId: string) => {
    const message = index.message(deviceId, waMessageId);
    if (!message) throw new DomainError('message_not_found', `the device has no message ${waMessageId}`);
    return message;
  };
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
        'a chat with a new message moves to the top (it shows on a fresh first page). Chats deleted for this account are left out until their next message. ' +
        'Filters (each optional): `archived`, `pinned`, `unread` (unread messages or marked unread), `label` (a label id). ' +
        ONLY_WHAT_THE_GATEWAY_SAW,
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      query: ChatListQuery,
      headers: ConditionalHeaders,
      responses: {
        200: { description: 'A page of chats, with its `ETag`.', schema: ChatListSchema },
        304: NOT_MODIFIED,
        404: { description: 'No such device.' },
      },
      handler({ params, query, ctx }) {
        const { limit, cursor, ...filter } = query;
        const after = pageKeyOf(cursor);
        const { tag, fresh } = conditional(ctx);
        if (fresh) return { status: 304, headers: { ETag: tag! } };
        // Made as JSON text by SQLite (src/chats/chat-list-json.ts), as a chat's page is.
        const page = index.chatsJson(params.deviceId, { limit: limit ?? 50, after, filter });
        return {
          status: 200,
          body: new PrebuiltJson(`{"items":${page.items},"nextCursor":${JSON.stringify(pageCursor(page.next))}}`),
          ...(tag ? { headers: { ETag: tag } } : {}),
        };
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
      headers: ConditionalHeaders,
      responses: {
        200: { description: 'A page of messages, with its `ETag`.', schema: MessagePageSchema },
        304: NOT_MODIFIED,
        404: { description: 'No such device.' },
      },
      async handler({ params, query, device, ctx }) {
        // The page shows this account's number in its own messages: a new number is a new page.
        const phone = device.view.session.phone;
        const after = pageKeyOf(query.cursor);
        const { tag, fresh } = conditional(ctx, phone ?? '');
        if (fresh) return { status: 304, headers: { ETag: tag! } };
        // Made as JSON text by SQLite (src/chats/message-page-json.ts): the same answer as the views, at a third of the
        // cost, on a reader thread while the event loop serves other requests.
        const page = await reads.run('messagesJson', params.deviceId, params.chatId, {
          limit: query.limit ?? 50,
          after,
          phone,
        });
        return {
          status: 200,
          body: new PrebuiltJson(`{"items":${page.items},"nextCursor":${JSON.stringify(pageCursor(page.next))}}`),
          ...(tag ? { headers: { ETag: tag } } : {}),
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
      path: '/devices/:deviceId/chats/:chatId/history',
      operationId: 'fetchChatHistory',
      tag,
      summary: "Ask the phone for a chat's older messages",
      description:
        'Asks the phone (on demand, as WhatsApp Web does when one scrolls up) for up to `count` messages of the chat older than the oldest one ' +
        "the gateway holds (`before`). The answer comes later, as history: another `history.synced`, and the messages in the chat's pages marked " +
        '`historical`, without `message.received`. Asked whatever the `historySync` setting. WhatsApp sends about 50 at most a request: ask again ' +
        'for more (each request starts from the oldest message then held). The sandbox phone has one message a minute before the oldest, back to 2009.',
      access: 'device',
      scope: 'read',
      params: ChatParams,
      body: HistoryFetchBody,
      responses: {
        202: { description: 'Asked; the messages arrive as history.', schema: HistoryRequestedSchema },
        404: CHAT_NOT_FOUND,
        409: NOT_ONLINE,
      },
      async handler({ params, body }) {
        const before = await chats.fetchHistory(params.deviceId, params.chatId, body.count);
        return {
          status: 202,
          body: {
            chatId: params.chatId,
            count: body.count,
            before: { waMessageId: before.waMessageId, timestamp: before.timestamp },
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/messages',
      operationId: 'searchMessages',
      tag: 'Messages',
      summary: 'Search messages',
      description:
        'Messages whose text, caption, file name or poll question contains every word of `q`, in any order, case and accents folded (SQLite FTS5; ' +
        "a word also matches longer words it starts), newest first, as in a chat's pages; `chatId` keeps to one chat. Messages deleted (for everyone or " +
        'for this account) are not found. No match: `{ "items": [] }`.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      query: SearchQuery,
      responses: {
        200: { description: 'A page of messages.', schema: MessagePageSchema },
        404: { description: 'No such device.' },
      },
      handler({ params, query, device }) {
        const page = index.search(params.deviceId, query.q, {
          ...(query.chatId !== undefined ? { chatId: query.chatId } : {}),
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
      method: 'patch',
      path: '/devices/:deviceId/chats/:chatId',
      operationId: 'updateChat',
      tag,
      summary: 'Archive, pin, mute or mark a chat (un)read',
      description:
        "Changes this account's settings of the chat on WhatsApp (as the phone would: the other linked devices see them), recorded as `chat.updated` once " +
        'WhatsApp took them. `muted`: `false`, `true` (for ever) or an ISO 8601 time in the future. Answers the chat as `GET /chats` shows it.',
      access: 'device',
      scope: 'manage',
      params: ChatParams,
      body: ChatPatchBody,
      responses: {
        200: { description: 'The chat.', schema: ChatSchema },
        400: {
          description: 'A wrong body, or a time to mute until in the past (`invalid_request`, `malformed_json`).',
        },
        404: CHAT_NOT_FOUND,
        409: NOT_ONLINE,
      },
      async handler({ params, body }) {
        if (typeof body.muted === 'string' && !(Date.parse(body.muted) > now()))
          throw invalidRequest('body/muted must be a time in the future', [
            { path: '/muted', message: 'must be a time in the future' },
          ]);
        await chats.modify(params.deviceId, params.chatId, body);
        const chat = index.chat(params.deviceId, params.chatId);
        if (!chat) throw new DomainError('chat_not_found', `the device has no chat ${params.chatId}`);
        return { status: 200, body: chat };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/chats/:chatId',
      operationId: 'deleteChat',
      tag,
      summary: 'Delete a chat for this account',
      description:
        'Deletes the chat on WhatsApp for this account (recorded as `chat.deleted` with `cleared: false`): it leaves `GET /chats` with its messages; ' +
        'a later message brings the chat back.',
      access: 'device',
      scope: 'manage',
      params: ChatParams,
      responses: {
        200: { description: 'Deleted.', schema: ChatDeletedSchema },
        404: CHAT_NOT_FOUND,
        409: NOT_ONLINE,
      },
      async handler({ params }) {
        await chats.remove(params.deviceId, params.chatId, false);
        return { status: 200, body: { chatId: params.chatId, cleared: false } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/chats/:chatId/clear',
      operationId: 'clearChat',
      tag,
      summary: 'Empty a chat, keeping it',
      description:
        "Clears the chat's messages for this account (recorded as `chat.deleted` with `cleared: true`); the chat stays.",
      access: 'device',
      scope: 'manage',
      params: ChatParams,
      responses: {
        200: { description: 'Cleared.', schema: ChatDeletedSchema },
        404: CHAT_NOT_FOUND,
        409: NOT_ONLINE,
      },
      async handler({ params }) {
        await chats.remove(params.deviceId, params.chatId, true);
        return { status: 200, body: { chatId: params.chatId, cleared: true } };
      },
    }),
    ...(['put', 'delete'] as const).map((method) =>
      defineRoute({
        method,
        path: '/devices/:deviceId/messages/:waMessageId/star',
        operationId: method === 'put' ? 'starMessage' : 'unstarMessage',
        tag: 'Messages',
        summary: method === 'put' ? 'Star a message' : 'Unstar a message',
        description:
          "Stars (PUT) or unstars (DELETE) the message on WhatsApp for this account; its view's `starred` shows it.",
        access: 'device',
        scope: 'manage',
        params: MessageParams,
        responses: {
          200: { description: 'Done.', schema: StarSchema },
          404: MESSAGE_NOT_FOUND,
          409: NOT_ONLINE,
        },
        async handler({ params }) {
          await chats.star(params.deviceId, params.waMessageId, method === 'put');
          return { status: 200, body: { waMessageId: params.waMessageId, starred: method === 'put' } };
        },
      }),
    ),
    defineRoute({
      method: 'put',
      path: '/devices/:deviceId/messages/:waMessageId/pin',
      operationId: 'pinMessage',
      tag: 'Messages',
      summary: 'Pin a message in its chat',
      description:
        "Pins the message in its chat for `24h`, `7d` or `30d` (everyone in the chat sees it); its view's `pinnedUntil` shows until when.",
      access: 'device',
      scope: 'manage',
      params: MessageParams,
      body: PinBody,
      responses: {
        200: { description: 'Pinned.', schema: PinSchema },
        404: MESSAGE_NOT_FOUND,
        409: NOT_ONLINE,
      },
      async handler({ params, body }) {
        await chats.pin(params.deviceId, params.waMessageId, body.duration);
        const message = messageAfter(params.deviceId, params.waMessageId);
        return { status: 200, body: { waMessageId: params.waMessageId, pinnedUntil: message.pinnedUntil } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/messages/:waMessageId/pin',
      operationId: 'unpinMessage',
      tag: 'Messages',
      summary: 'Unpin a message',
      description: 'Unpins the message in its chat.',
      access: 'device',
      scope: 'manage',
      params: MessageParams,
      responses: {
        200: { description: 'Unpinned.', schema: PinSchema },
        404: MESSAGE_NOT_FOUND,
        409: NOT_ONLINE,
      },
      async handler({ params }) {
        await chats.pin(params.deviceId, params.waMessageId, undefined);
        return { status: 200, body: { waMessageId: params.waMessageId, pinnedUntil: null } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/messages/:waMessageId',
      operationId: 'deleteMessageForMe',
      tag: 'Messages',
      summary: 'Delete a message for this account only',
      description:
        "`?for=me`: deleted on WhatsApp for this account only (recorded as `message.deleted`); it leaves the chat's pages and `GET /messages/:waMessageId`. " +
        'To delete a sent message for everyone, use `DELETE /send/:waMessageId`.',
      access: 'device',
      scope: 'send',
      params: MessageParams,
      query: DeleteForMeQuery,
      responses: {
        200: { description: 'Deleted for this account.', schema: DoneSchema },
        400: { description: 'Without the query `for=me` (`invalid_request`).' },
        404: MESSAGE_NOT_FOUND,
        409: NOT_ONLINE,
      },
      async handler({ params }) {
        await chats.deleteForMe(params.deviceId, params.waMessageId);
        return { status: 200, body: { ok: true as const } };
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
