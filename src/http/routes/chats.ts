/**
 * Read receipts and presence (POST /devices/:deviceId/chats/:chatId/read, …/chats/:chatId/presence,
 * …/presence): sent at once through the live connection, never queued; they need an online session.
 */
import type { ChatCommands } from '../../chats/chat-commands.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { ChatParams, ChatPresenceBody, PresenceBody, PresenceSchema, ReadBody, ReadSchema } from '../schemas/send.js';

const tag = 'Chats';
const NOT_ONLINE = { description: 'The session is not online (`session_not_online`).' };

export function chatRoutes({ chats }: { chats: ChatCommands }): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/chats/:chatId/read',
      operationId: 'readChat',
      tag,
      summary: 'Send read receipts',
      description:
        'Read receipts for received messages of the chat: those in `messageIds`, or every unread one when it is left out. Recorded (ChatRead) before they are sent. ' +
        'A `messageIds` entry that is not a received message of this chat: `404 message_not_found`.',
      access: 'device',
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
      params: ChatParams,
      body: ChatPresenceBody,
      responses: { 200: { description: 'Sent.', schema: PresenceSchema }, 404: { description: 'No such device.' }, 409: NOT_ONLINE },
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
      summary: 'Set the account\'s availability',
      description: '`available` or `unavailable`, at once (not queued).',
      access: 'device',
      params: DeviceParams,
      body: PresenceBody,
      responses: { 200: { description: 'Sent.', schema: PresenceSchema }, 404: { description: 'No such device.' }, 409: NOT_ONLINE },
      async handler({ params, body }) {
        await chats.presence(params.deviceId, body.state);
        return { status: 200, body: { state: body.state } };
      },
    }),
  ];
}
