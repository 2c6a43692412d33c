/**
 * The chats rows of the message index: a chat touched by each new message (its last message, unread count, name;
 * a deleted chat comes back), and the changes made to chats and their messages besides (settings, deletions,
 * stars, pins, labels).
 */
import { isStatusChat } from '../status/status-chat.js';
import { isChannelId } from '../channels/channel-id.js';
import type { InboxEvent } from '../inbox/inbox-events.js';
import type { RowBuffer } from '../projections/row-buffer.js';
import { labelsAfter } from './chat-labels.js';
import type { ChatRow, MessageRow } from './message-index-schema.js';

/** The buffers' key of a row: its device and its chat or message id. */
export const rowKey = (deviceId: string, id: string) => `${deviceId}\u0000${id}`;

export interface ChatRowBuffers {
  messages: RowBuffer<MessageRow>;
  chats: RowBuffer<ChatRow>;
}

type ChatChangeEvent = Extract<
  InboxEvent,
  { type: 'ChatUpdated' | 'ChatDeleted' | 'MessageDeleted' | 'MessageStarred' | 'MessagePinned' | 'ChatLabelChanged' }
>;

/** A new message of a chat (not a reaction): the chat's last message, its unread count, its name. */
export function touchChat(
  chats: RowBuffer<ChatRow>,
  message: MessageRow,
  name: string | undefined,
  counts = true,
): void {
  // Statuses and channel posts (this device's and others') are kept as messages (their media is served) but are no chat.
  if (isStatusChat(message.chat_id) || isChannelId(message.chat_id)) return;
  const chatKey = rowKey(message.device_id, message.chat_id);
  const unread = counts && message.from_me === 0 ? 1 : 0;
  const chat = chats.get(chatKey);
  if (!chat) {
    chats.put(chatKey, {
      device_id: message.device_id,
      chat_id: message.chat_id,
      name: name ?? null,
      last_wa_message_id: message.wa_message_id,
      last_at: message.at,
      last_pos: message.pos,
      unread,
      archived: 0,
      pinned: 0,
      muted_until: null,
      marked_unread: 0,
      deleted: 0,
      cleared_at: 0,
      cleared_pos: 0,
      labels: null,
      last_from_me: message.from_me,
      last_type: message.type,
      last_body: message.body,
      last_revoked: message.revoked,
    });
    return;
  }
  // A deleted chat comes back with its next message, not with history imported after it was deleted.
  if (counts) chat.deleted = 0;
  if (message.at > chat.last_at || (message.at === chat.last_at && message.pos > chat.last_pos)) {
    chat.last_wa_message_id = message.wa_message_id;
    chat.last_at = message.at;
    chat.last_pos = message.pos;
    chat.last_from_me = message.from_me;
    chat.last_type = message.type;
    chat.last_body = message.body;
    chat.last_revoked = message.revoked;
  }
  chat.unread += unread;
  if (name !== undefined) chat.name = name;
  chats.put(chatKey, chat);
}

/** A message's text was edited or it was revoked: where it is its chat's last message, the chat's row shows that. */
export function showOnChat(chats: RowBuffer<ChatRow>, message: MessageRow): void {
  if (isStatusChat(message.chat_id) || isChannelId(message.chat_id)) return;
  const chatKey = rowKey(message.device_id, message.chat_id);
  const chat = chats.get(chatKey);
  if (!chat || chat.last_pos !== message.pos || chat.last_wa_message_id !== message.wa_message_id) return;
  chat.last_body = message.body;
  chat.last_revoked = message.revoked;
  chats.put(chatKey, chat);
}

/** Chat settings, deletions and message marks (ChatUpdated, ChatDeleted, MessageDeleted, MessageStarred, MessagePinned), and labels on chats. */
export function applyChatChange(rows: ChatRowBuffers, event: ChatChangeEvent, position: number): void {
  const { messages, chats } = rows;
  switch (event.type) {
    case 'ChatUpdated': {
      const d = event.data;
      const chatKey = rowKey(d.deviceId, d.chatId);
      const chat = chats.get(chatKey);
      // A chat the gateway never saw a message of has no row to show settings on.
      if (!chat) return;
      if (d.archived !== undefined) chat.archived = d.archived ? 1 : 0;
      if (d.pinned !== undefined) chat.pinned = d.pinned ? 1 : 0;
      if (d.mutedUntil !== undefined) chat.muted_until = d.mutedUntil;
      if (d.unread !== undefined) {
        chat.marked_unread = d.unread ? 1 : 0;
        // Marked read as a whole: nothing of it is unread any more.
        if (!d.unread) chat.unread = 0;
      }
      chats.put(chatKey, chat);
      return;
    }
    case 'ChatDeleted': {
      const d = event.data;
      const chatKey = rowKey(d.deviceId, d.chatId);
      const chat = chats.get(chatKey);
      if (!chat) return;
      // Its last message then is the newest cleared: older history imported later stays cleared.
      chat.cleared_at = chat.last_at;
      chat.cleared_pos = position;
      chat.unread = 0;
      chat.marked_unread = 0;
      if (!d.cleared) chat.deleted = 1;
      chats.put(chatKey, chat);
      return;
    }
    case 'MessageDeleted':
    case 'MessageStarred':
    case 'MessagePinned': {
      const d = event.data;
      const id = rowKey(d.deviceId, d.waMessageId);
      const row = messages.get(id);
      if (!row || row.chat_id !== d.chatId) return;
      if (event.type === 'MessageDeleted') row.deleted = 1;
      else if (event.type === 'MessageStarred') row.starred = event.data.starred ? 1 : 0;
      else row.pinned_until = event.data.pinnedUntil;
      messages.put(id, row);
      return;
    }
    case 'ChatLabelChanged': {
      const chatKey = rowKey(event.data.deviceId, event.data.chatId);
      const chat = chats.get(chatKey);
      // A chat the gateway never saw a message of has no row to show labels on.
      if (!chat) return;
      chat.labels = labelsAfter(chat.labels, event.data);
      chats.put(chatKey, chat);
      return;
    }
  }
}
