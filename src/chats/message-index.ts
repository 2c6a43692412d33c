/**
 * The message index: one row per message a device sent (through its outbox) or received, with what the
 * commands about messages need: its chat, sender, type and text (replies, forwards), its send status and
 * time (edits within 15 minutes), whether a received one was read (read receipts), its received media
 * (served and kept for the retention period; a sent message's stored media are kept as long, for forwards)
 * and a poll's secret (decrypting votes). Fed from the log.
 *
 * It is also the conversations read model (GET /chats, /chats/:chatId/messages, /messages/:waMessageId):
 * each message's reactions, edits, quote, media and, for outgoing ones, the history of its statuses; and
 * one row per chat with its last message and unread count (received messages not yet covered by a ChatRead).
 * Only what the gateway saw: messages from before the device was linked, or while no gateway ran, are not here.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { isGroupId } from '../messages/chat-id.js';
import type { ChatEvent, InboundMedia, InboundType, MessageEvent, MessageStatus } from '../messages/message-events.js';
import { mediaUrlOf } from '../media/media-url.js';
import type { Projection } from '../projections/projection.js';
import { BulkInsert } from '../projections/bulk-insert.js';
import { RowBuffer } from '../projections/row-buffer.js';
import { type OutboxEvent, type QueuedContent, mediaOf } from '../outbox/stream/outbox-events.js';
import { nextStatus } from '../outbox/stream/message-status.js';
import type { QuotedMessage, SeenMessage, SeenMessages } from '../outbox/commands/seen-messages.js';

type Handled = MessageEvent | ChatEvent | Extract<OutboxEvent, { type: 'OutboxMessageQueued' | 'OutboxMessageEdited' }>;
const HANDLED: ReadonlySet<string> = new Set<Handled['type']>([
  'MessageReceived',
  'MessageStatusChanged',
  'OutboxMessageQueued',
  'OutboxMessageEdited',
  'MessageEdited',
  'MessageRevoked',
  'ChatRead',
  'InboundMediaUpdated',
]);
const isHandled = eventGuard<Handled>(HANDLED);

/** A row of chat_messages as held in memory during a batch (JSON columns as text). */
interface MessageRow {
  device_id: string;
  wa_message_id: string;
  chat_id: string;
  from_me: number;
  sender: string;
  participant: string | null;
  type: InboundType;
  body: string;
  at: number;
  /** Log position of the event that recorded the message: the tie-breaker of a chat's order. */
  pos: number;
  outbox_id: string | null;
  content: string | null;
  status: string | null;
  sent_at: number | null;
  read: number;
  revoked: number;
  edited: number;
  media: string | null;
  /**
   * When the media file was stored (epoch ms): a received one's download, or a sent one's `sent` (the outbox then
   * moves its file to the received media). The retention sweep goes by it.
   */
  media_stored_at: number | null;
  received: string | null;
  poll: string | null;
  quoted: string | null;
  /** JSON array of Reaction, one per reacting sender. */
  reactions: string | null;
  /** Outgoing messages: the log position of the newest entry of its status history (chat_message_statuses). */
  last_status: number | null;
  /**
   * Messages deleted for everyone, by their sender or (status `deleted`) by this device: the log position of that
   * (the sweep of their media files goes by it).
   */
  revoked_pos: number | null;
}

/** The columns the queries read. */
type Row = Omit<MessageRow, 'device_id' | 'read' | 'poll' | 'revoked_pos'>;

/** A row of chats. */
interface ChatRow {
  device_id: string;
  chat_id: string;
  name: string | null;
  last_wa_message_id: string;
  last_at: number;
  last_pos: number;
  unread: number;
}

const MESSAGE_COLUMNS = [
  'device_id',
  'wa_message_id',
  'chat_id',
  'from_me',
  'sender',
  'participant',
  'type',
  'body',
  'at',
  'pos',
  'outbox_id',
  'content',
  'status',
  'sent_at',
  'read',
  'revoked',
  'edited',
  'media',
  'media_stored_at',
  'received',
  'poll',
  'quoted',
  'reactions',
  'last_status',
  'revoked_pos',
] as const satisfies ReadonlyArray<keyof MessageRow>;
const CHAT_COLUMNS = [
  'device_id',
  'chat_id',
  'name',
  'last_wa_message_id',
  'last_at',
  'last_pos',
  'unread',
] as const satisfies ReadonlyArray<keyof ChatRow>;
const MESSAGE_KEYS = ['pos'] as const;
const CHAT_KEYS = ['device_id', 'chat_id'] as const;

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
  lastMessage: { waMessageId: string; fromMe: boolean; type: InboundType; body: string; timestamp: number };
  /** ISO 8601: the time of the last message. */
  updatedAt: string;
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

const key = (deviceId: string, id: string) => `${deviceId}\u0000${id}`;
const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The columns of chat_message_statuses: pos (of the event that recorded it), prev (the entry before), status, at, error (JSON). */
const STATUS_COLUMNS = ['pos', 'prev', 'status', 'at', 'error'] as const;

/** The message type a queued content shows as. */
function typeOfContent(content: QueuedContent): InboundType {
  switch (content.kind) {
    case 'forward':
      return typeOfContent(content.content);
    case 'edit':
      return 'text';
    default:
      return content.kind;
  }
}

function bodyOfContent(content: QueuedContent): string {
  switch (content.kind) {
    case 'text':
    case 'link':
      return content.text;
    case 'image':
    case 'video':
    case 'file':
      return content.caption ?? '';
    case 'location':
      return content.name ?? content.address ?? '';
    case 'reaction':
      return content.emoji;
    case 'contact':
      return content.contacts.map((c) => c.name).join(', ');
    case 'poll':
      return content.question;
    case 'forward':
      return bodyOfContent(content.content);
    default:
      return '';
  }
}

/** Rows kept in memory between batches (src/projections/row-buffer.ts): a message's next status finds its row there. */
const ROWS_KEPT = 5_000;

export class MessageIndex implements Projection, SeenMessages {
  readonly name = 'message-index';
  /**
   * 2: chats, positions, reactions, edits, quotes and status histories. 3: status histories in a table of their own.
   * 4: edits, revokes and reactions only from the right party and chat. 5: where each revoke is (`revoked_pos`),
   * and the kept media of sent messages (`media_stored_at` set by `sent`, `revoked_pos` by `deleted`).
   */
  readonly version = 5;
  readonly handles: ReadonlySet<string> = HANDLED;
  /**
   * apply() reads rows by their keys only; while a rebuild fills the emptied table, the message buffer finds a
   * written row by its position (RowBuffer's `locate`), so even the unique index by id is built once at the end.
   */
  readonly deferredIndexes = [
    'chat_messages_by_id',
    'chat_messages_unread',
    'chat_messages_media',
    'chat_messages_revoked_media',
    'chat_messages_by_chat',
    'chats_by_activity',
  ];
  private statements: ReturnType<MessageIndex['prepare']> | undefined;
  private buffers: { messages: RowBuffer<MessageRow>; chats: RowBuffer<ChatRow> } | undefined;
  /** Rows new in the batch, and its status history entries, inserted at its end. */
  private readonly inserts: { messages: BulkInsert; chats: BulkInsert; statuses: BulkInsert };
  /** UPDATE statements by the columns they set. */
  private readonly updates = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.inserts = {
      messages: new BulkInsert(db, 'INSERT INTO chat_messages', MESSAGE_COLUMNS),
      chats: new BulkInsert(db, 'INSERT INTO chats', CHAT_COLUMNS, { keyColumns: 2 }),
      statuses: new BulkInsert(db, 'INSERT INTO chat_message_statuses', STATUS_COLUMNS),
    };
  }

  setup(db: Database.Database): void {
    // Rows are keyed by the log position of the event that recorded them (`pos`): a rebuild appends them in
    // key order, and rows of a few hundred bytes sit better in a rowid table than in a key-ordered one.
    // A table of version 1 lacks the new columns, one of version 2 holds each status history as JSON (every
    // status change rewrote the growing list), one of version 4 lacks revoked_pos: dropped, and the runner
    // rebuilds this read model (version changed).
    const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('chat_messages') as string[];
    if (columns.length > 0 && !columns.includes('revoked_pos')) db.exec('DROP TABLE chat_messages');
    db.exec(`
      CREATE TABLE IF NOT EXISTS chat_messages (
        device_id       TEXT NOT NULL,
        wa_message_id   TEXT NOT NULL,
        chat_id         TEXT NOT NULL,
        from_me         INTEGER NOT NULL,
        sender          TEXT NOT NULL,
        participant     TEXT,
        type            TEXT NOT NULL,
        body            TEXT NOT NULL,
        at              INTEGER NOT NULL,
        pos             INTEGER PRIMARY KEY,
        outbox_id       TEXT,
        content         TEXT,
        status          TEXT,
        sent_at         INTEGER,
        read            INTEGER NOT NULL DEFAULT 0,
        revoked         INTEGER NOT NULL DEFAULT 0,
        edited          INTEGER NOT NULL DEFAULT 0,
        media           TEXT,
        media_stored_at INTEGER,
        received        TEXT,
        poll            TEXT,
        quoted          TEXT,
        reactions       TEXT,
        last_status     INTEGER,
        revoked_pos     INTEGER
      );
      CREATE UNIQUE INDEX IF NOT EXISTS chat_messages_by_id ON chat_messages (device_id, wa_message_id);
      CREATE INDEX IF NOT EXISTS chat_messages_unread ON chat_messages (device_id, chat_id) WHERE from_me = 0 AND read = 0;
      CREATE INDEX IF NOT EXISTS chat_messages_media ON chat_messages (media_stored_at) WHERE media_stored_at IS NOT NULL;
      -- Stored media of messages deleted for everyone, in the order of the deletions: swept soon after each.
      CREATE INDEX IF NOT EXISTS chat_messages_revoked_media ON chat_messages (revoked_pos) WHERE revoked_pos IS NOT NULL AND media_stored_at IS NOT NULL;
      -- A chat's messages newest first, paged by key (reactions are shown on their message, not listed).
      CREATE INDEX IF NOT EXISTS chat_messages_by_chat ON chat_messages (device_id, chat_id, at, pos) WHERE type <> 'reaction';
      CREATE TABLE IF NOT EXISTS chats (
        device_id          TEXT NOT NULL,
        chat_id            TEXT NOT NULL,
        name               TEXT,
        last_wa_message_id TEXT NOT NULL,
        last_at            INTEGER NOT NULL,
        last_pos           INTEGER NOT NULL,
        unread             INTEGER NOT NULL,
        PRIMARY KEY (device_id, chat_id)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS chats_by_activity ON chats (device_id, last_at, last_pos);
      -- Outgoing messages' statuses (and edits), keyed by the log position of the event that recorded each, so
      -- they are only ever appended at the end of the table (live messages in flight are spread over the whole
      -- message table: entries keyed by message would land on a different page each). Each entry names the one
      -- before it of its message (\`prev\`); a message row names its newest (\`last_status\`).
      CREATE TABLE IF NOT EXISTS chat_message_statuses (
        pos    INTEGER PRIMARY KEY,
        prev   INTEGER,
        status TEXT NOT NULL,
        at     TEXT NOT NULL,
        error  TEXT
      );
    `);
  }

  reset(db: Database.Database): void {
    this.discard();
    db.exec('DELETE FROM chat_messages; DELETE FROM chats; DELETE FROM chat_message_statuses');
    const { messages, chats } = this.rows();
    messages.emptied();
    chats.emptied();
  }

  caughtUp(): void {
    this.buffers?.messages.caughtUp();
    this.buffers?.chats.caughtUp();
  }

  apply(stored: StoredEvent): void {
    if (!isHandled(stored)) return;
    const event = stored;
    const { messages, chats } = this.rows();
    switch (event.type) {
      case 'MessageReceived': {
        const d = event.data;
        const id = key(d.deviceId, d.waMessageId);
        if (messages.get(id)) return;
        const row: MessageRow = {
          device_id: d.deviceId,
          wa_message_id: d.waMessageId,
          chat_id: d.chatId ?? d.from,
          from_me: d.fromMe ? 1 : 0,
          sender: d.fromMe ? '' : d.from,
          participant: d.participant ?? null,
          type: d.type,
          body: d.body,
          at: d.timestamp,
          pos: stored.position,
          outbox_id: null,
          content: null,
          status: null,
          sent_at: null,
          read: 0,
          revoked: 0,
          edited: 0,
          media: d.media ? JSON.stringify(d.media) : null,
          media_stored_at: d.media?.status === 'ready' ? stored.createdAt.getTime() : null,
          received: d.location || d.contacts ? JSON.stringify({ location: d.location, contacts: d.contacts }) : null,
          poll: d.poll && d.secret ? JSON.stringify({ options: d.poll.options, secret: d.secret }) : null,
          quoted: d.quoted ? JSON.stringify(d.quoted) : null,
          reactions: null,
          last_status: null,
          revoked_pos: null,
        };
        messages.put(id, row);
        if (d.type === 'reaction') {
          if (d.reaction)
            this.react(d.deviceId, d.reaction.messageId, row.chat_id, {
              from: d.fromMe ? '' : d.from,
              fromMe: d.fromMe === true,
              emoji: d.reaction.emoji,
            });
          return;
        }
        this.touchChat(row, d.fromMe || d.isGroup || !d.pushName ? undefined : d.pushName);
        return;
      }
      case 'OutboxMessageQueued': {
        const d = event.data;
        const content = d.content;
        if (content.kind === 'edit') {
          // The send command edits only this device's own messages; the index holds to that too.
          if (this.rows().messages.get(key(d.deviceId, content.messageId))?.from_me === 1)
            this.edit(d.deviceId, content.messageId, content.text, d.createdAt, true, stored.position);
          return;
        }
        const id = key(d.deviceId, d.waMessageId);
        if (messages.get(id)) return;
        const row: MessageRow = {
          device_id: d.deviceId,
          wa_message_id: d.waMessageId,
          chat_id: d.to,
          from_me: 1,
          sender: '',
          participant: null,
          type: typeOfContent(content),
          body: bodyOfContent(content),
          at: Math.floor(Date.parse(d.createdAt) / 1000) || 0,
          pos: stored.position,
          outbox_id: d.outboxId,
          content: JSON.stringify(content),
          status: 'queued',
          sent_at: null,
          read: 0,
          revoked: 0,
          edited: 0,
          media: null,
          media_stored_at: null,
          received: null,
          poll: content.kind === 'poll' ? JSON.stringify({ options: content.options, secret: content.secret }) : null,
          quoted: d.replyTo ? JSON.stringify(d.replyTo) : null,
          reactions: null,
          last_status: stored.position,
          revoked_pos: null,
        };
        messages.put(id, row);
        this.inserts.statuses.add(stored.position, null, 'queued', d.createdAt, null);
        if (content.kind === 'reaction') {
          this.react(d.deviceId, content.messageId, d.to, { from: '', fromMe: true, emoji: content.emoji });
          return;
        }
        this.touchChat(row, undefined);
        return;
      }
      case 'OutboxMessageEdited':
        // Edited while still queued: the recipient never sees the first text, so it is not `edited`.
        this.edit(
          event.data.deviceId,
          event.data.waMessageId,
          event.data.text,
          stored.createdAt.toISOString(),
          false,
          stored.position,
        );
        return;
      case 'MessageStatusChanged': {
        const { deviceId, waMessageId, status, timestamp, error } = event.data;
        const id = key(deviceId, waMessageId);
        const row = messages.get(id);
        if (!row || row.outbox_id === null) return;
        this.inserts.statuses.add(
          stored.position,
          row.last_status,
          status,
          isoOf(timestamp),
          error ? JSON.stringify(error) : null,
        );
        row.last_status = stored.position;
        const next = nextStatus(row.status ?? 'queued', status);
        if (next !== row.status) {
          row.status = next;
          if (status === 'sent' && row.sent_at === null) row.sent_at = timestamp;
          if (status === 'deleted') row.revoked = 1;
        }
        // The outbox keeps a sent message's stored media from its `sent` on (also a `sent` recorded after a receipt,
        // which leaves the status as it is), as received media are kept from the event that stored them.
        if (status === 'sent' && row.media_stored_at === null && hasStoredMedia(row.type, row.content))
          row.media_stored_at = stored.createdAt.getTime();
        // Deleted for everyone by this device: its kept media are swept soon, like those of a received message its sender revoked.
        if (status === 'deleted' && row.revoked === 1 && row.media_stored_at !== null)
          row.revoked_pos ??= stored.position;
        messages.put(id, row);
        return;
      }
      case 'MessageEdited':
        if (this.changedByRightParty(event.data, false))
          this.edit(
            event.data.deviceId,
            event.data.waMessageId,
            event.data.body,
            isoOf(event.data.timestamp),
            true,
            stored.position,
          );
        return;
      case 'MessageRevoked': {
        const id = key(event.data.deviceId, event.data.waMessageId);
        const row = messages.get(id);
        if (!row || !this.changedByRightParty(event.data, true)) return;
        row.revoked = 1;
        row.revoked_pos ??= stored.position;
        messages.put(id, row);
        return;
      }
      case 'ChatRead': {
        const { deviceId, chatId } = event.data;
        let cleared = 0;
        for (const waMessageId of event.data.waMessageIds) {
          const id = key(deviceId, waMessageId);
          const row = messages.get(id);
          if (!row || row.from_me === 1 || row.read === 1) continue;
          row.read = 1;
          messages.put(id, row);
          if (row.type !== 'reaction' && row.chat_id === chatId) cleared++;
        }
        if (cleared > 0) {
          const chatKey = key(deviceId, chatId);
          const chat = chats.get(chatKey);
          if (chat) {
            chat.unread = Math.max(0, chat.unread - cleared);
            chats.put(chatKey, chat);
          }
        }
        return;
      }
      case 'InboundMediaUpdated': {
        const { deviceId, waMessageId, media } = event.data;
        const id = key(deviceId, waMessageId);
        const row = messages.get(id);
        if (!row) return;
        row.media = JSON.stringify(media);
        row.media_stored_at = media.status === 'ready' ? stored.createdAt.getTime() : null;
        // Stored after its sender deleted it: swept as if deleted now (the sweep is past the deletion).
        if (row.revoked_pos !== null) row.revoked_pos = stored.position;
        messages.put(id, row);
        return;
      }
    }
  }

  flush(): void {
    // Chats after messages: a chat's last message is always a row.
    this.buffers?.messages.flush();
    this.inserts.messages.flush();
    this.buffers?.chats.flush();
    this.inserts.chats.flush();
    this.inserts.statuses.flush();
  }

  discard(): void {
    this.buffers?.messages.discard();
    this.buffers?.chats.discard();
    for (const insert of Object.values(this.inserts)) insert.discard();
  }

  /** A new message of a chat (not a reaction): the chat's last message, its unread count, its name. */
  private touchChat(message: MessageRow, name: string | undefined): void {
    const chats = this.rows().chats;
    const chatKey = key(message.device_id, message.chat_id);
    const unread = message.from_me === 0 ? 1 : 0;
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
      });
      return;
    }
    if (message.at > chat.last_at || (message.at === chat.last_at && message.pos > chat.last_pos)) {
      chat.last_wa_message_id = message.wa_message_id;
      chat.last_at = message.at;
      chat.last_pos = message.pos;
    }
    chat.unread += unread;
    if (name !== undefined) chat.name = name;
    chats.put(chatKey, chat);
  }

  /**
   * Whether an edit or a revoke reported by the network may change the message: it names the message's chat,
   * and comes from its sender (this account for its own messages, `fromMe`). A WhatsApp client does the same
   * checks; without them anyone could rewrite or delete any message the device has, its own sends included, by
   * naming its id. In a group an admin may delete others' messages: the index does not know who the admins
   * are, so a revoke there is taken from any member of the group.
   */
  private changedByRightParty(
    change: { deviceId: string; waMessageId: string; chatId: string; from: string; fromMe?: boolean },
    adminsMay: boolean,
  ): boolean {
    const row = this.rows().messages.get(key(change.deviceId, change.waMessageId));
    if (!row || row.chat_id !== change.chatId) return false;
    // An event that does not say who made it (written before `fromMe` was, src/messages/message-upcasters.ts)
    // touches an own message unless it comes from the other party of a one-to-one chat, as the index took it then.
    const ownChange = change.fromMe ?? (isGroupId(row.chat_id) || change.from !== row.chat_id);
    const bySender = row.from_me === 1 ? ownChange : change.fromMe !== true && change.from === row.sender;
    return bySender || (adminsMay && isGroupId(row.chat_id));
  }

  private react(deviceId: string, waMessageId: string, chatId: string, reaction: Reaction): void {
    const id = key(deviceId, waMessageId);
    const messages = this.rows().messages;
    const row = messages.get(id);
    // A reaction to a message the gateway never saw, or one that names a message of another chat.
    if (!row || row.chat_id !== chatId) return;
    const others = (row.reactions ? (JSON.parse(row.reactions) as Reaction[]) : []).filter(
      (r) => r.fromMe !== reaction.fromMe || r.from !== reaction.from,
    );
    // An empty emoji takes the sender's reaction back.
    const next = reaction.emoji === '' ? others : [...others, reaction];
    row.reactions = next.length > 0 ? JSON.stringify(next) : null;
    messages.put(id, row);
  }

  private edit(
    deviceId: string,
    waMessageId: string,
    body: string,
    at: string,
    shown: boolean,
    position: number,
  ): void {
    const id = key(deviceId, waMessageId);
    const messages = this.rows().messages;
    const row = messages.get(id);
    if (!row) return;
    row.body = body;
    if (shown) row.edited = 1;
    if (row.outbox_id !== null) {
      this.inserts.statuses.add(position, row.last_status, 'edited', at, null);
      row.last_status = position;
    }
    messages.put(id, row);
  }

  find(deviceId: string, waMessageId: string): SeenMessage | undefined {
    const row = this.sql().byId.get(deviceId, waMessageId);
    return row && seenOf(row);
  }

  /** The columns a reply needs (five, not a whole row: read on every send with `replyTo`). */
  quoted(deviceId: string, waMessageId: string): QuotedMessage | undefined {
    const row = this.sql().quoted.get(deviceId, waMessageId);
    return row && { chatId: row.chat_id, fromMe: row.from_me === 1, from: row.sender, type: row.type, body: row.body };
  }

  /** One message with its whole life (GET /messages/:waMessageId); reactions included. */
  message(deviceId: string, waMessageId: string): MessageDetail | undefined {
    const row = this.sql().byId.get(deviceId, waMessageId);
    if (!row) return undefined;
    const view: MessageDetail = viewOf(deviceId, row);
    if (row.outbox_id !== null) {
      view.outboxId = row.outbox_id;
      view.statusHistory = this.sql()
        .statuses.all(row.last_status)
        .map((s) =>
          s.error
            ? { status: s.status, at: s.at, error: JSON.parse(s.error) as StatusEntry['error'] }
            : { status: s.status, at: s.at },
        );
    }
    return view;
  }

  /** A chat's messages, newest first, a page after `after` (keyset: timestamp, then log position). */
  messages(deviceId: string, chatId: string, options: { limit: number; after?: PageKey }): Page<MessageView> {
    const sql = this.sql();
    const rows = options.after
      ? sql.chatPageAfter.all(deviceId, chatId, options.after.at, options.after.pos, options.limit + 1)
      : sql.chatPage.all(deviceId, chatId, options.limit + 1);
    const page = rows.slice(0, options.limit).map(pageRowOf);
    const last = page[page.length - 1];
    return {
      items: page.map((row) => viewOf(deviceId, row)),
      next: rows.length > options.limit && last ? { at: last.at, pos: last.pos } : null,
    };
  }

  /** A device's chats, most recent activity first. */
  chats(deviceId: string, options: { limit: number; after?: PageKey }): Page<ChatView> {
    const sql = this.sql();
    const rows = options.after
      ? sql.chatsAfter.all(deviceId, options.after.at, options.after.pos, options.limit + 1)
      : sql.chats.all(deviceId, options.limit + 1);
    const page = rows.slice(0, options.limit);
    const last = page[page.length - 1];
    return {
      items: page.map((row) => ({
        chatId: row.chat_id,
        isGroup: isGroupId(row.chat_id),
        ...(row.name ? { name: row.name } : {}),
        unreadCount: row.unread,
        lastMessage: {
          waMessageId: row.last_wa_message_id,
          fromMe: row.from_me === 1,
          type: row.type,
          body: row.revoked ? '' : row.body,
          timestamp: row.last_at,
        },
        updatedAt: isoOf(row.last_at),
      })),
      next: rows.length > options.limit && last ? { at: last.last_at, pos: last.last_pos } : null,
    };
  }

  /** Whether the device has a chat with this id (GET /chats/:chatId/messages of an unknown chat is an empty page). */
  hasChat(deviceId: string, chatId: string): boolean {
    return this.sql().chatExists.get(deviceId, chatId) !== undefined;
  }

  /** Received messages of a chat not yet read by this device, oldest first. */
  unread(deviceId: string, chatId: string, limit = 1_000): Array<{ waMessageId: string; participant?: string }> {
    return this.sql()
      .unread.all(deviceId, chatId, limit)
      .map((r) => ({ waMessageId: r.wa_message_id, ...(r.participant ? { participant: r.participant } : {}) }));
  }

  /** Whether a received message was marked read; undefined when unknown. */
  participantOf(
    deviceId: string,
    waMessageId: string,
  ): { participant?: string; chatId: string; fromMe: boolean; read: boolean } | undefined {
    const row = this.sql().participant.get(deviceId, waMessageId);
    return (
      row && {
        chatId: row.chat_id,
        fromMe: row.from_me === 1,
        read: row.read === 1,
        ...(row.participant ? { participant: row.participant } : {}),
      }
    );
  }

  /** A poll's options and secret, for decrypting its votes. */
  poll(deviceId: string, waMessageId: string): { options: string[]; secret: string } | undefined {
    const row = this.sql().poll.get(deviceId, waMessageId);
    return row?.poll ? (JSON.parse(row.poll) as { options: string[]; secret: string }) : undefined;
  }

  /** Stored media of messages deleted for everyone after log position `after`, in the order of the deletions. */
  revokedMediaAfter(after: number, limit: number): Array<{ deviceId: string; waMessageId: string; revokedAt: number }> {
    return this.sql()
      .revokedMedia.all(after, limit)
      .map((r) => ({ deviceId: r.device_id, waMessageId: r.wa_message_id, revokedAt: r.revoked_pos }));
  }

  /** Received media stored before `before` (epoch ms), oldest first: the retention sweep removes their files. */
  mediaStoredBefore(
    before: number,
    limit: number,
    after = 0,
  ): Array<{ deviceId: string; waMessageId: string; storedAt: number }> {
    return this.sql()
      .mediaBefore.all(after, before, limit)
      .map((r) => ({ deviceId: r.device_id, waMessageId: r.wa_message_id, storedAt: r.media_stored_at }));
  }

  private rows() {
    if (this.buffers) return this.buffers;
    const sql = this.sql();
    const split = (k: string) => k.split('\u0000') as [string, string];
    this.buffers = {
      messages: new RowBuffer<MessageRow>(
        (k, pos) => (pos === undefined ? sql.messageRow.get(...split(k)) : sql.messageRowAt.get(pos as number)),
        (row, stored, saved) =>
          stored
            ? this.update('chat_messages', MESSAGE_COLUMNS, MESSAGE_KEYS, row, saved!)
            : this.inserts.messages.addObject(row),
        ROWS_KEPT,
        true,
        (row) => row.pos,
      ),
      chats: new RowBuffer<ChatRow>(
        (k) => sql.chatRow.get(...split(k)),
        (row, stored, saved) =>
          stored ? this.update('chats', CHAT_COLUMNS, CHAT_KEYS, row, saved!) : this.inserts.chats.addObject(row),
        ROWS_KEPT,
        true,
      ),
    };
    return this.buffers;
  }

  /**
   * Writes the columns that changed since the row was stored, and only those: a status change sets
   * `status`, not the indexed chat and unread columns (SQLite rewrites the index entries of every column in SET).
   */
  private update<R extends object, C extends keyof R & string>(
    table: string,
    columns: readonly C[],
    keys: readonly C[],
    row: R,
    saved: R,
  ): void {
    let changed: C[] | undefined;
    for (const column of columns) if (row[column] !== saved[column]) (changed ??= []).push(column);
    if (!changed) return;
    const name = `${table}:${changed.join(',')}`;
    let statement = this.updates.get(name);
    if (!statement) {
      statement = this.db.prepare(
        `UPDATE ${table} SET ${changed.map((c) => `${c} = ?`).join(', ')} WHERE ${keys.map((c) => `${c} = ?`).join(' AND ')}`,
      );
      this.updates.set(name, statement);
    }
    statement.run([...changed.map((c) => row[c]), ...keys.map((c) => row[c])]);
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    const VIEW =
      'wa_message_id, chat_id, from_me, sender, participant, type, body, at, pos, outbox_id, content, status, sent_at, revoked, edited, media, media_stored_at, received, quoted, reactions, last_status';
    return {
      // A message's history: from its newest entry back along `prev`, then oldest first.
      statuses: db.prepare<[number | null], { status: StatusEntry['status']; at: string; error: string | null }>(
        `WITH RECURSIVE history (pos, prev, status, at, error) AS (
           SELECT pos, prev, status, at, error FROM chat_message_statuses WHERE pos = ?
           UNION ALL SELECT s.pos, s.prev, s.status, s.at, s.error FROM chat_message_statuses s JOIN history h ON s.pos = h.prev
         ) SELECT status, at, error FROM history ORDER BY pos`,
      ),
      messageRow: db.prepare<[string, string], MessageRow>(
        `SELECT ${MESSAGE_COLUMNS.join(', ')} FROM chat_messages WHERE device_id = ? AND wa_message_id = ?`,
      ),
      messageRowAt: db.prepare<[number], MessageRow>(
        `SELECT ${MESSAGE_COLUMNS.join(', ')} FROM chat_messages WHERE pos = ?`,
      ),
      chatRow: db.prepare<[string, string], ChatRow>(
        `SELECT ${CHAT_COLUMNS.join(', ')} FROM chats WHERE device_id = ? AND chat_id = ?`,
      ),
      byId: db.prepare<[string, string], Row>(
        `SELECT ${VIEW} FROM chat_messages WHERE device_id = ? AND wa_message_id = ?`,
      ),
      quoted: db.prepare<[string, string], Pick<Row, 'chat_id' | 'from_me' | 'sender' | 'type' | 'body'>>(
        'SELECT chat_id, from_me, sender, type, body FROM chat_messages WHERE device_id = ? AND wa_message_id = ?',
      ),
      // Rows as arrays of the columns a view needs: a page is 50 rows, and objects of 20 columns cost more than the query.
      chatPage: db
        .prepare<[string, string, number], PageRaw>(
          `SELECT ${PAGE} FROM chat_messages WHERE device_id = ? AND chat_id = ? AND type <> 'reaction' ORDER BY at DESC, pos DESC LIMIT ?`,
        )
        .raw(true),
      chatPageAfter: db
        .prepare<[string, string, number, number, number], PageRaw>(
          `SELECT ${PAGE} FROM chat_messages WHERE device_id = ? AND chat_id = ? AND type <> 'reaction' AND (at, pos) < (?, ?) ORDER BY at DESC, pos DESC LIMIT ?`,
        )
        .raw(true),
      chats: db.prepare<[string, number], ChatListRow>(
        `${CHAT_LIST} WHERE c.device_id = ? ORDER BY c.last_at DESC, c.last_pos DESC LIMIT ?`,
      ),
      chatsAfter: db.prepare<[string, number, number, number], ChatListRow>(
        `${CHAT_LIST} WHERE c.device_id = ? AND (c.last_at, c.last_pos) < (?, ?) ORDER BY c.last_at DESC, c.last_pos DESC LIMIT ?`,
      ),
      chatExists: db.prepare<[string, string], { one: number }>(
        'SELECT 1 AS one FROM chats WHERE device_id = ? AND chat_id = ?',
      ),
      unread: db.prepare<[string, string, number], { wa_message_id: string; participant: string | null }>(
        // Reactions are shown on their message, not counted unread, and get no receipts.
        "SELECT wa_message_id, participant FROM chat_messages WHERE device_id = ? AND chat_id = ? AND from_me = 0 AND read = 0 AND type <> 'reaction' ORDER BY at LIMIT ?",
      ),
      participant: db.prepare<
        [string, string],
        { chat_id: string; from_me: number; participant: string | null; read: number }
      >('SELECT chat_id, from_me, participant, read FROM chat_messages WHERE device_id = ? AND wa_message_id = ?'),
      poll: db.prepare<[string, string], { poll: string | null }>(
        'SELECT poll FROM chat_messages WHERE device_id = ? AND wa_message_id = ?',
      ),
      revokedMedia: db.prepare<[number, number], { device_id: string; wa_message_id: string; revoked_pos: number }>(
        'SELECT device_id, wa_message_id, revoked_pos FROM chat_messages WHERE revoked_pos > ? AND media_stored_at IS NOT NULL ORDER BY revoked_pos LIMIT ?',
      ),
      mediaBefore: db.prepare<
        [number, number, number],
        { device_id: string; wa_message_id: string; media_stored_at: number }
      >(
        'SELECT device_id, wa_message_id, media_stored_at FROM chat_messages WHERE media_stored_at > ? AND media_stored_at < ? ORDER BY media_stored_at LIMIT ?',
      ),
    };
  }
}

/** A chat with its last message's current state (edits and revokes show). */
const CHAT_LIST = `SELECT c.chat_id, c.name, c.unread, c.last_wa_message_id, c.last_at, c.last_pos, m.from_me, m.type, m.body, m.revoked
  FROM chats c JOIN chat_messages m ON m.device_id = c.device_id AND m.wa_message_id = c.last_wa_message_id`;

interface ChatListRow {
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
}

/**
 * What a message's view is made of: a page's columns (content only where it names sent media; media_stored_at
 * says whether a sent one is kept, and served).
 */
type PageRow = Pick<
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
>;
type PageRaw = [
  string,
  string,
  number,
  string,
  string | null,
  InboundType,
  string,
  number,
  number,
  string | null,
  number,
  number,
  string | null,
  string | null,
  string | null,
  string | null,
  number | null,
];
const PAGE = `wa_message_id, chat_id, from_me, sender, participant, type, body, at, pos, status, revoked, edited, media, quoted, reactions,
  CASE WHEN media IS NULL AND type IN ('image', 'video', 'audio', 'file', 'sticker') THEN content END AS content, media_stored_at`;

function pageRowOf(r: PageRaw): PageRow {
  return {
    wa_message_id: r[0],
    chat_id: r[1],
    from_me: r[2],
    sender: r[3],
    participant: r[4],
    type: r[5],
    body: r[6],
    at: r[7],
    pos: r[8],
    status: r[9],
    revoked: r[10],
    edited: r[11],
    media: r[12],
    quoted: r[13],
    reactions: r[14],
    content: r[15],
    media_stored_at: r[16],
  };
}

function viewOf(deviceId: string, row: PageRow): MessageView {
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
  };
}

const MEDIA_TYPES: ReadonlySet<string> = new Set<InboundType>(['image', 'video', 'audio', 'file', 'sticker']);

/** Whether a sent message's content carries media stored by the gateway (not a url fetched at send time). */
function hasStoredMedia(type: InboundType, content: string | null): boolean {
  // The type first: the content is parsed only for media messages.
  return (
    MEDIA_TYPES.has(type) && content !== null && mediaOf(JSON.parse(content) as QueuedContent)?.source === 'stored'
  );
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

function seenOf(row: Row): SeenMessage {
  return {
    waMessageId: row.wa_message_id,
    chatId: row.chat_id,
    fromMe: row.from_me === 1,
    from: row.sender,
    type: row.type,
    body: row.body,
    revoked: row.revoked === 1,
    ...(row.outbox_id ? { outboxId: row.outbox_id } : {}),
    ...(row.content ? { content: JSON.parse(row.content) as QueuedContent } : {}),
    ...(row.status ? { status: row.status } : {}),
    ...(row.sent_at !== null ? { sentAt: row.sent_at } : {}),
    ...(row.media ? { media: JSON.parse(row.media) as InboundMedia } : {}),
    ...(row.media_stored_at !== null ? { mediaStoredAt: row.media_stored_at } : {}),
    ...(row.received ? { received: JSON.parse(row.received) as SeenMessage['received'] } : {}),
  };
}
