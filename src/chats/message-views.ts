/**
 * The message index's rows as the conversation routes show them (GET /chats, /chats/:chatId/messages,
 * /messages/:waMessageId).
 */
import type { InboundMedia, InboundType, MessageStatus } from '../messages/message-events.js';
import { isGroupId } from '../messages/chat-id.js';
import { mediaUrlOf } from '../media/media-url.js';
import { type QueuedContent, mediaOf } from '../outbox/stream/outbox-events.js';
import type { Row } from './message-index-schema.js';

/** A reaction on a message: the latest emoji of each sender ("" for this account itself). */
export interface Reaction {
  from: string;
  fromMe: boolean;
  emoji: string;
}

/** One step of an outgoing message's life. */
export interface StatusEntry {
  status: MessageStatus | 'edited';
  /** ISO 8601. */
  at: string;
  error?: { code: string; message: string };
}

/** A message as the conversation routes show it (GET /chats/:chatId/messages, GET /messages/:waMessageId). */
export interface MessageView {
  waMessageId: string;
  chatId: string;
  /** The sender; "" for this account's own messages (the route fills in the account's number when known). */
  from: string;
  fromMe: boolean;
  participant?: string;
  type: InboundType;
  body: string;
  timestamp: number;
  status?: string;
  quoted?: { waMessageId: string; from: string; fromMe?: boolean; type: string; body: string };
  media?: { mimetype?: string; size?: number; filename?: string; url?: string; sha256?: string; status?: string };
  reactions: Reaction[];
  edited: boolean;
  revoked: boolean;
  starred: boolean;
  /** ISO 8601, or null when not pinned. */
  pinnedUntil: string | null;
  /** Imported from the history WhatsApp sent when the device linked (or asked for), not seen live. */
  historical: boolean;
}

export interface MessageDetail extends MessageView {
  outboxId?: string;
  statusHistory?: StatusEntry[];
}

export interface ChatView {
  chatId: string;
  isGroup: boolean;
  name?: string;
  unreadCount: number;
  /** Absent while the chat is cleared (nothing came since). */
  lastMessage?: { waMessageId: string; fromMe: boolean; type: InboundType; body: string; timestamp: number };
  /** ISO 8601: the time of the last message. */
  updatedAt: string;
  archived: boolean;
  pinned: boolean;
  /** null, an ISO 8601 time or "forever". */
  mutedUntil: string | null;
  /** Unread messages, or marked unread as a whole. */
  unread: boolean;
  /** Label ids (WhatsApp Business). */
  labels: string[];
}

/** Where a page starts: after this (timestamp, position) in the order newest first. */
export interface PageKey {
  at: number;
  pos: number;
}

export interface Page<T> {
  items: T[];
  next: PageKey | null;
}

let lastSeconds: number | undefined;
let lastIso = '';

/** Seconds as ISO 8601; the last answer is kept: a rebuild meets the same second again and again (statuses of a round). */
export function isoOf(seconds: number): string {
  if (seconds !== lastSeconds) {
    lastIso = new Date(seconds * 1000).toISOString();
    lastSeconds = seconds;
  }
  return lastIso;
}

export interface ChatListRow {
  chat_id: string;
  name: string | null;
  unread: number;
  last_wa_message_id: string;
  last_at: number;
  last_pos: number;
  from_me: number;
  type: InboundType;
  body: string;
  revoked: number;
  archived: number;
  pinned: number;
  muted_until: string | null;
  marked_unread: number;
  labels: string | null;
  cleared_at: number;
  cleared_pos: number;
}

/**
 * What a message's view is made of: a page's columns (content only where it names sent media; media_stored_at
 * says whether a sent one is kept, and served).
 */
export type PageRow = Pick<
  Row,
  | 'wa_message_id'
  | 'chat_id'
  | 'from_me'
  | 'sender'
  | 'participant'
  | 'type'
  | 'body'
  | 'at'
  | 'pos'
  | 'status'
  | 'revoked'
  | 'edited'
  | 'media'
  | 'quoted'
  | 'reactions'
  | 'content'
  | 'media_stored_at'
  | 'starred'
  | 'pinned_until'
  | 'historical'
>;

export function viewOf(deviceId: string, row: PageRow): MessageView {
  const content = row.content ? (JSON.parse(row.content) as QueuedContent) : undefined;
  // A sent message's media is kept, and served where a received one is, from its `sent` on (media_stored_at).
  const media = row.media
    ? (JSON.parse(row.media) as InboundMedia)
    : content
      ? outgoingMedia(content, row.media_stored_at !== null ? mediaUrlOf(deviceId, row.wa_message_id) : undefined)
      : undefined;
  return {
    waMessageId: row.wa_message_id,
    chatId: row.chat_id,
    from: row.sender,
    fromMe: row.from_me === 1,
    ...(row.participant ? { participant: row.participant } : {}),
    type: row.type,
    // A revoked message's text is gone for everyone, here too.
    body: row.revoked ? '' : row.body,
    timestamp: row.at,
    ...(row.status ? { status: row.status } : {}),
    ...(row.quoted ? { quoted: JSON.parse(row.quoted) as MessageView['quoted'] } : {}),
    ...(media && !row.revoked ? { media } : {}),
    reactions: row.reactions ? (JSON.parse(row.reactions) as Reaction[]) : [],
    edited: row.edited === 1,
    revoked: row.revoked === 1,
    starred: row.starred === 1,
    pinnedUntil: row.pinned_until,
    historical: row.historical === 1,
  };
}

/** This account's own messages and reactions name its number (`phone`), when known ('' or undefined: as they are). */
export function withOwnPhone<T extends Pick<MessageView, 'from' | 'fromMe' | 'reactions'>>(
  phone: string | undefined,
  message: T,
): T {
  if (!phone) return message;
  const reactions = message.reactions.some((r) => r.fromMe)
    ? message.reactions.map((r) => (r.fromMe ? { ...r, from: phone } : r))
    : message.reactions;
  return { ...message, ...(message.fromMe ? { from: phone } : {}), reactions };
}

/** A chat with its last message (GET /chats). */
const isAfterClearing = (row: ChatListRow): boolean =>
  row.last_at > row.cleared_at || (row.last_at === row.cleared_at && row.last_pos > row.cleared_pos);

export function chatViewOf(row: ChatListRow): ChatView {
  return {
    chatId: row.chat_id,
    isGroup: isGroupId(row.chat_id),
    ...(row.name ? { name: row.name } : {}),
    unreadCount: row.unread,
    // A cleared chat shows none of its cleared messages, its last one neither.
    ...(isAfterClearing(row)
      ? {
          lastMessage: {
            waMessageId: row.last_wa_message_id,
            fromMe: row.from_me === 1,
            type: row.type,
            body: row.revoked ? '' : row.body,
            timestamp: row.last_at,
          },
        }
      : {}),
    updatedAt: isoOf(row.last_at),
    archived: row.archived === 1,
    pinned: row.pinned === 1,
    mutedUntil: row.muted_until,
    unread: row.unread > 0 || row.marked_unread === 1,
    labels: row.labels ? (JSON.parse(row.labels) as string[]) : [],
  };
}

/** An entry of an outgoing message's status history (GET /messages/:waMessageId). */
export function statusEntryOf(s: { status: StatusEntry['status']; at: string; error: string | null }): StatusEntry {
  return s.error
    ? { status: s.status, at: s.at, error: JSON.parse(s.error) as StatusEntry['error'] }
    : { status: s.status, at: s.at };
}

/**
 * What a sent message's media was: its type, size and name, and `url` where its kept bytes are served (GET
 * /messages/:waMessageId/media) once sent. No `sha256`: its bytes were never hashed, and are not read for a view.
 */
function outgoingMedia(content: QueuedContent, url: string | undefined): MessageView['media'] | undefined {
  const media = mediaOf(content);
  if (!media) return undefined;
  return {
    ...(media.mimetype ? { mimetype: media.mimetype } : {}),
    ...(media.source === 'stored' ? { size: media.size } : {}),
    ...(media.filename ? { filename: media.filename } : {}),
    ...(url !== undefined ? { url } : {}),
  };
}
