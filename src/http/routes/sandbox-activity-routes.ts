import { type RouteSpec, defineRoute } from '../route.js';
import {
  SandboxGroupBody,
  SandboxGroupSchema,
  AcceptedSchema,
  SandboxCallBody,
  SandboxStatusViewBody,
  SandboxChannelReactionBody,
  SandboxCallSchema,
  SandboxChatUpdateBody,
  SandboxHistoryBody,
  SandboxPresenceBody,
} from '../schemas/sandbox.js';
import { createHash, randomBytes } from 'node:crypto';
import { isGroupId } from '../../messages/chat-id.js';
import type { ChatActivity } from '../../engines/engine.js';
import type { SandboxHistoryChunk } from '../../engines/sandbox/sandbox-engine.js';
import { type SandboxCalls, type SandboxRouteDeps, tag } from './sandbox-calls.js';

export function sandboxActivityRoutes(deps: SandboxRouteDeps, net: SandboxCalls): RouteSpec[] {
  const { sandbox } = deps;
  const { networkRoute, act, syncHistory, ring, viewStatus, reactToChannelPost } = net;
  return [
    defineRoute({
      method: 'post',
      path: '/sandbox/groups',
      operationId: 'sandboxCreateGroup',
      tag,
      summary: 'Make a group in the simulated network',
      description:
        "A group whose `members` (numbers) receive its messages: every sandbox device online under a member's number gets a message sent to the group " +
        '(`chatId` = the group id, `120363` + 12 digits + `@g.us`).',
      access: 'admin',
      scope: 'manage',
      body: SandboxGroupBody,
      responses: { 201: { description: 'Made.', schema: SandboxGroupSchema } },
      handler({ body }) {
        return { status: 201, body: sandbox.createGroup(body.subject, body.members) };
      },
    }),
    networkRoute({
      path: '/sandbox/devices/:deviceId/presence',
      operationId: 'sandboxPresence',
      summary: "A contact's presence",
      description:
        '`from` is typing, recording, paused, available or unavailable (in `chatId`, default the direct chat): the device records `presence.update`.',
      body: SandboxPresenceBody,
      async reach({ params, body }, reached) {
        reached(
          await act(params.deviceId, {
            kind: 'presence',
            chatId: body.chatId ?? body.from,
            from: body.from,
            state: body.state,
          }),
        );
      },
    }),
    networkRoute({
      path: '/sandbox/devices/:deviceId/history',
      operationId: 'sandboxHistory',
      summary: 'The phone sends a history sync',
      description:
        "A chunk of the account's history reaches the device, as WhatsApp sends one when a device links: its messages appear in their chats marked " +
        '`historical` (no `message.received`), then `history.synced`. The same chunk sent again records nothing. With the `historySync` setting `none` ' +
        'the device drops it. A message without `waMessageId` gets one derived from its chat, sender, timestamp and text (the same message in two chunks is one). ' +
        'Answered once recorded: a chunk the store refuses is refused (503, 507) and not recorded later.',
      body: SandboxHistoryBody,
      responses: {
        202: { description: 'Recorded by the device (or dropped by its `historySync: none`).', schema: AcceptedSchema },
        503: { description: 'The store cannot record now (`store_unavailable`); nothing was recorded.' },
        507: { description: 'The disk is full (`insufficient_storage`); nothing was recorded.' },
      },
      async reach({ params, body, device }, reached) {
        const syncId = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 32);
        const chunk: SandboxHistoryChunk = {
          syncId,
          chats: body.chats.map((c) => ({ chatId: c.chatId, ...(c.name !== undefined ? { name: c.name } : {}) })),
          messages: body.chats.flatMap((chat) => {
            const isGroup = isGroupId(chat.chatId);
            // Built field by field, not from spreads: a history chunk holds thousands of messages.
            return chat.messages.map((m) => {
              const message: SandboxHistoryChunk['messages'][number] = {
                chatId: chat.chatId,
                isGroup,
                from: m.fromMe ? (device.view.session.phone ?? '') : (m.from ?? (isGroup ? '' : chat.chatId)),
                type: m.type ?? 'text',
                body: m.body,
                timestamp: m.timestamp,
              };
              if (m.waMessageId !== undefined) message.waMessageId = m.waMessageId;
              if (m.fromMe) message.fromMe = true;
              if (isGroup && !m.fromMe && m.from) message.participant = m.from;
              return message;
            });
          }),
          ...(body.progress !== undefined ? { progress: body.progress } : {}),
          final: body.final ?? true,
        };
        reached(await syncHistory(params.deviceId, chunk));
      },
    }),
    networkRoute({
      path: '/sandbox/devices/:deviceId/chat-update',
      operationId: 'sandboxChatUpdate',
      summary: 'The phone changes a chat',
      description:
        'The phone (or another linked device) archives, pins, mutes, marks (un)read, deletes or clears the chat, or deletes messages for this account: ' +
        'the device records `chat.updated`, `chat.deleted` and `message.deleted`.',
      body: SandboxChatUpdateBody,
      async reach({ params, body }, reached) {
        const { chatId, deleted, cleared, deletedMessageIds, ...settings } = body;
        const activities: ChatActivity[] = [];
        if (Object.keys(settings).length > 0) activities.push({ kind: 'chat_updated', chatId, ...settings });
        for (const waMessageId of deletedMessageIds ?? [])
          activities.push({ kind: 'message_deleted', chatId, waMessageId });
        if (cleared) activities.push({ kind: 'chat_deleted', chatId, cleared: true });
        if (deleted) activities.push({ kind: 'chat_deleted', chatId, cleared: false });
        for (const activity of activities) {
          reached(await act(params.deviceId, activity));
        }
      },
    }),
    networkRoute({
      path: '/sandbox/devices/:deviceId/status-view',
      operationId: 'sandboxStatusView',
      summary: "Another number views the device's status",
      description:
        '`from` views the status `waMessageId` that this device posted: the device gets its read receipt, and `GET /status` lists `from` among the viewers.',
      body: SandboxStatusViewBody,
      async reach({ params, body }, reached) {
        reached(await viewStatus(params.deviceId, body));
      },
    }),
    networkRoute({
      path: '/sandbox/devices/:deviceId/channel-reaction',
      operationId: 'sandboxChannelReaction',
      summary: "Another number reacts to a post of the device's channel",
      description:
        '`from` reacts with `emoji` to the post `waMessageId` of the channel `channelId`: GET …/channels/:channelId/messages counts it (a post the channel does not have is passed over).',
      body: SandboxChannelReactionBody,
      async reach({ params, body }, reached) {
        reached(await reactToChannelPost(params.deviceId, body));
      },
    }),
    networkRoute({
      path: '/sandbox/devices/:deviceId/call',
      operationId: 'sandboxCall',
      summary: 'An incoming call',
      description:
        '`from` calls the device (video with `isVideo`): it records `call.received`, `rejected` when its settings reject calls (the caller then gets `rejectCallsMessage`).',
      body: SandboxCallBody,
      responses: {
        202: { description: 'Ringing.', schema: SandboxCallSchema },
      },
      async reach({ params, body }, reached) {
        const callId = randomBytes(16).toString('hex').toUpperCase();
        reached(
          await ring(params.deviceId, {
            callId,
            from: body.from,
            isVideo: body.isVideo === true,
          }),
        );
        return { callId };
      },
    }),
  ];
}
