/**
 * Chat management on a Baileys socket (archive, pin, mute, read/unread, delete, clear through `chatModify`; stars;
 * message pins; a chat's older messages asked for with `fetchMessageHistory`), and the app-state changes made on the phone mapped back: `chats.update`, `chats.delete`,
 * `messages.delete` and the `starred` of `messages.update`.
 */
import { type BaileysEventMap, type ChatModification, type WAMessageKey, proto } from 'baileys';
import {
  type ChatActivity,
  type ChatChange,
  type ChatMessageRef,
  type ChatOperations,
  EngineError,
} from '../engine.js';
import type { BaileysSocket } from './baileys-socket.js';
import { jidOfChat } from './jid.js';
import { type OwnChatChanges, echoFieldOf } from './own-chat-changes.js';

type ChatSocket = BaileysSocket & Required<Pick<BaileysSocket, 'chatModify'>>;

export const hasChats = (socket: BaileysSocket): socket is ChatSocket => typeof socket.chatModify === 'function';

/** WhatsApp's "muted for ever". */
const MUTED_FOREVER = -1;

function keyOf(chatId: string, message: ChatMessageRef): WAMessageKey {
  return {
    remoteJid: jidOfChat(chatId),
    id: message.waMessageId,
    fromMe: message.fromMe,
    ...(message.participant && !message.fromMe ? { participant: jidOfChat(message.participant) } : {}),
  };
}

/** What `chatModify` takes for a change (archive, read state, delete and clear name the chat's last message). */
export function modificationOf(chatId: string, change: ChatChange, last: ChatMessageRef | undefined): ChatModification {
  const lastMessages = last ? [{ key: keyOf(chatId, last), messageTimestamp: last.timestamp }] : [];
  if ('archived' in change) return { archive: change.archived, lastMessages };
  if ('pinned' in change) return { pin: change.pinned };
  if ('mutedUntilMs' in change) {
    const until = change.mutedUntilMs;
    return { mute: until === null ? null : Number.isFinite(until) ? until : MUTED_FOREVER };
  }
  if ('unread' in change) return { markRead: !change.unread, lastMessages };
  if ('deleted' in change) return { delete: true, lastMessages };
  return { clear: true, lastMessages };
}

/** `own` learns each change made, so that Baileys' local echo of it is not reported as the phone's. */
export function baileysChatOperations(
  socket: ChatSocket,
  requireOnline: () => void,
  own: OwnChatChanges,
): ChatOperations {
  const attempt = async (what: string, run: () => Promise<unknown>) => {
    requireOnline();
    try {
      await run();
    } catch (error) {
      if (error instanceof EngineError) throw error;
      throw new EngineError('engine_error', `${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  return {
    modify: (chatId, change, last) =>
      attempt(`changing the chat ${chatId}`, () =>
        own.expecting([`${jidOfChat(chatId)}/${echoFieldOf(change)}`], () =>
          socket.chatModify(modificationOf(chatId, change, last), jidOfChat(chatId)),
        ),
      ),
    star: (chatId, message, starred) =>
      attempt(`starring ${message.waMessageId}`, () =>
        own.expecting([`${jidOfChat(chatId)}/${message.waMessageId}/starred`], () =>
          socket.chatModify(
            { star: { messages: [{ id: message.waMessageId, fromMe: message.fromMe }], star: starred } },
            jidOfChat(chatId),
          ),
        ),
      ),
    pin: (chatId, message, seconds) =>
      attempt(`pinning ${message.waMessageId}`, () =>
        socket.sendMessage(jidOfChat(chatId), {
          pin: keyOf(chatId, message),
          type: seconds > 0 ? proto.PinInChat.Type.PIN_FOR_ALL : proto.PinInChat.Type.UNPIN_FOR_ALL,
          ...(seconds > 0 ? { time: seconds as 86400 | 604800 | 2592000 } : {}),
        }),
      ),
    deleteForMe: (chatId, message) =>
      attempt(`deleting ${message.waMessageId} for this account`, () =>
        own.expecting([`${jidOfChat(chatId)}/${message.waMessageId}/deleted`], () =>
          socket.chatModify(
            { deleteForMe: { deleteMedia: true, key: keyOf(chatId, message), timestamp: message.timestamp } },
            jidOfChat(chatId),
          ),
        ),
      ),
    ...(socket.fetchMessageHistory
      ? {
          fetchHistory: (chatId: string, count: number, oldest: ChatMessageRef) =>
            attempt(`asking for the history of ${chatId}`, () =>
              // WhatsApp takes the oldest message's time in ms (oldestMsgTimestampMs).
              socket.fetchMessageHistory!(count, keyOf(chatId, oldest), oldest.timestamp * 1000),
            ),
        }
      : {}),
  };
}

/** A mute's end as Baileys reports it (ms; -1 or 0 … for ever) → null, "forever" or an ISO time. */
function mutedUntilOf(muteEndTime: number | null | undefined): string | null {
  if (muteEndTime === null || muteEndTime === undefined) return null;
  if (muteEndTime <= 0) return 'forever';
  // Seconds in older clients, ms in newer ones.
  return new Date(muteEndTime < 1e12 ? muteEndTime * 1000 : muteEndTime).toISOString();
}

/**
 * App-state changes of chats (`chats.update`) as the activities the gateway records, their `chatId` still the JID
 * (the inbound side maps it, a LID to its number where known). Fields of other origins (unread counts of new
 * messages, timestamps) are passed over.
 */
export function activitiesOfChatUpdates(updates: BaileysEventMap['chats.update']): ChatActivity[] {
  const activities: ChatActivity[] = [];
  for (const update of updates) {
    const chatId = update.id;
    if (!chatId) continue;
    const change: Extract<ChatActivity, { kind: 'chat_updated' }> = { kind: 'chat_updated', chatId };
    if (typeof update.archived === 'boolean') change.archived = update.archived;
    if ('pinned' in update && update.pinned !== undefined) change.pinned = !!update.pinned;
    if ('muteEndTime' in update && update.muteEndTime !== undefined)
      change.mutedUntil = mutedUntilOf(update.muteEndTime === null ? null : Number(update.muteEndTime));
    if (update.unreadCount === -1) change.unread = true;
    else if (update.unreadCount === 0) change.unread = false;
    if (Object.keys(change).length > 2) activities.push(change);
  }
  return activities;
}

/** Chats deleted on the phone. */
export function activitiesOfChatDeletes(ids: BaileysEventMap['chats.delete']): ChatActivity[] {
  return ids.map((chatId) => ({ kind: 'chat_deleted' as const, chatId, cleared: false }));
}

/** Messages deleted for this account on the phone, or a whole chat cleared. */
export function activitiesOfMessageDeletes(deletion: BaileysEventMap['messages.delete']): ChatActivity[] {
  if ('all' in deletion) return [{ kind: 'chat_deleted', chatId: deletion.jid, cleared: true }];
  return deletion.keys.flatMap((key) =>
    key.remoteJid && key.id ? [{ kind: 'message_deleted' as const, chatId: key.remoteJid, waMessageId: key.id }] : [],
  );
}

/** Stars set or taken on the phone (`messages.update` with `starred`). */
export function activitiesOfStars(updates: BaileysEventMap['messages.update']): ChatActivity[] {
  return updates.flatMap(({ key, update }) =>
    typeof update.starred === 'boolean' && key.remoteJid && key.id
      ? [{ kind: 'message_starred' as const, chatId: key.remoteJid, waMessageId: key.id, starred: update.starred }]
      : [],
  );
}

/** A label made, changed or deleted on the phone (WhatsApp Business). */
export function activityOfLabelEdit(label: BaileysEventMap['labels.edit']): ChatActivity[] {
  if (!label.id) return [];
  return [
    {
      kind: 'label_updated',
      labelId: label.id,
      name: label.name ?? '',
      color: Number.isInteger(label.color) ? label.color : 0,
      deleted: label.deleted === true,
    },
  ];
}

/** A label put on a chat or taken off it on the phone; labels on single messages are passed over. */
export function activityOfLabelAssociation({
  association,
  type,
}: BaileysEventMap['labels.association']): ChatActivity[] {
  if ('messageId' in association || !association.chatId || !association.labelId) return [];
  return [{ kind: 'chat_labels', chatId: association.chatId, labelId: association.labelId, action: type }];
}
