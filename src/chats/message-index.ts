/**
 * The message index: one row per message a device sent (through its outbox) or received, with what the
 * commands about messages need: its chat, sender, type and text (replies, forwards), its send status and
 * time (edits within 15 minutes), whether a received one was read (read receipts), its received media
 * (served and kept for the retention period) and a poll's secret (decrypting votes). Fed from the log.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { ChatEvent, InboundMedia, InboundType, MessageEvent } from '../messages/message-events.js';
import type { Projection } from '../projections/projection.js';
import type { OutboxEvent, QueuedContent } from '../outbox/outbox-events.js';
import { nextStatus } from '../outbox/message-status.js';
import type { SeenMessage, SeenMessages } from '../outbox/seen-messages.js';

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

interface Row {
  wa_message_id: string;
  chat_id: string;
  from_me: number;
  sender: string;
  type: InboundType;
  body: string;
  outbox_id: string | null;
  content: string | null;
  status: string | null;
  sent_at: number | null;
  revoked: number;
  media: string | null;
  media_stored_at: number | null;
  received: string | null;
}

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

export class MessageIndex implements Projection, SeenMessages {
  readonly name = 'message-index';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<MessageIndex['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
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
        outbox_id       TEXT,
        content         TEXT,
        status          TEXT,
        sent_at         INTEGER,
        read            INTEGER NOT NULL DEFAULT 0,
        revoked         INTEGER NOT NULL DEFAULT 0,
        media           TEXT,
        media_stored_at INTEGER,
        received        TEXT,
        poll            TEXT,
        PRIMARY KEY (device_id, wa_message_id)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS chat_messages_unread ON chat_messages (device_id, chat_id) WHERE from_me = 0 AND read = 0;
      CREATE INDEX IF NOT EXISTS chat_messages_media ON chat_messages (media_stored_at) WHERE media_stored_at IS NOT NULL;
    `);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM chat_messages');
  }

  apply(stored: StoredEvent): void {
    if (!isHandled(stored)) return;
    const event = stored;
    const sql = this.sql();
    switch (event.type) {
      case 'MessageReceived': {
        const d = event.data;
        const media = d.media ? JSON.stringify(d.media) : null;
        const storedAt = d.media?.status === 'ready' ? stored.createdAt.getTime() : null;
        const received = d.location || d.contacts ? JSON.stringify({ location: d.location, contacts: d.contacts }) : null;
        const poll = d.poll && d.secret ? JSON.stringify({ options: d.poll.options, secret: d.secret }) : null;
        sql.insertReceived.run(
          d.deviceId,
          d.waMessageId,
          d.chatId ?? d.from,
          d.fromMe ? 1 : 0,
          d.fromMe ? '' : d.from,
          d.participant ?? null,
          d.type,
          d.body,
          d.timestamp,
          media,
          storedAt,
          received,
          poll,
        );
        return;
      }
      case 'OutboxMessageQueued': {
        const d = event.data;
        if (d.content.kind === 'edit') {
          sql.setBody.run(d.content.text, d.deviceId, d.content.messageId);
          return;
        }
        const poll = d.content.kind === 'poll' ? JSON.stringify({ options: d.content.options, secret: d.content.secret }) : null;
        sql.insertQueued.run(
          d.deviceId,
          d.waMessageId,
          d.to,
          typeOfContent(d.content),
          bodyOfContent(d.content),
          Math.floor(Date.parse(d.createdAt) / 1000) || 0,
          d.outboxId,
          JSON.stringify(d.content),
          poll,
        );
        return;
      }
      case 'OutboxMessageEdited':
        sql.setBody.run(event.data.text, event.data.deviceId, event.data.waMessageId);
        return;
      case 'MessageStatusChanged': {
        const { deviceId, waMessageId, status, timestamp } = event.data;
        const row = sql.statusOf.get(deviceId, waMessageId);
        if (!row) return;
        const next = nextStatus(row.status ?? 'queued', status);
        if (next !== row.status) sql.setStatus.run(next, status === 'sent' ? timestamp : null, status === 'deleted' ? 1 : 0, deviceId, waMessageId);
        return;
      }
      case 'MessageEdited':
        sql.setBody.run(event.data.body, event.data.deviceId, event.data.waMessageId);
        return;
      case 'MessageRevoked':
        sql.setRevoked.run(event.data.deviceId, event.data.waMessageId);
        return;
      case 'ChatRead':
        for (const id of event.data.waMessageIds) sql.setRead.run(event.data.deviceId, id);
        return;
      case 'InboundMediaUpdated': {
        const { deviceId, waMessageId, media } = event.data;
        sql.setMedia.run(JSON.stringify(media), media.status === 'ready' ? stored.createdAt.getTime() : null, deviceId, waMessageId);
        return;
      }
    }
  }

  find(deviceId: string, waMessageId: string): SeenMessage | undefined {
    const row = this.sql().byId.get(deviceId, waMessageId);
    return row && seenOf(row);
  }

  /** Received messages of a chat not yet read by this device, oldest first. */
  unread(deviceId: string, chatId: string, limit = 1_000): Array<{ waMessageId: string; participant?: string }> {
    return this.sql()
      .unread.all(deviceId, chatId, limit)
      .map((r) => ({ waMessageId: r.wa_message_id, ...(r.participant ? { participant: r.participant } : {}) }));
  }

  /** Whether a received message was marked read; undefined when unknown. */
  participantOf(deviceId: string, waMessageId: string): { participant?: string; chatId: string; fromMe: boolean } | undefined {
    const row = this.sql().participant.get(deviceId, waMessageId);
    return row && { chatId: row.chat_id, fromMe: row.from_me === 1, ...(row.participant ? { participant: row.participant } : {}) };
  }

  /** A poll's options and secret, for decrypting its votes. */
  poll(deviceId: string, waMessageId: string): { options: string[]; secret: string } | undefined {
    const row = this.sql().poll.get(deviceId, waMessageId);
    return row?.poll ? (JSON.parse(row.poll) as { options: string[]; secret: string }) : undefined;
  }

  /** Received media stored before `before` (epoch ms), oldest first: the retention sweep removes their files. */
  mediaStoredBefore(before: number, limit: number, after = 0): Array<{ deviceId: string; waMessageId: string; storedAt: number }> {
    return this.sql()
      .mediaBefore.all(after, before, limit)
      .map((r) => ({ deviceId: r.device_id, waMessageId: r.wa_message_id, storedAt: r.media_stored_at }));
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      insertReceived: db.prepare(
        `INSERT OR IGNORE INTO chat_messages (device_id, wa_message_id, chat_id, from_me, sender, participant, type, body, at, media, media_stored_at, received, poll)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertQueued: db.prepare(
        `INSERT OR IGNORE INTO chat_messages (device_id, wa_message_id, chat_id, from_me, sender, type, body, at, outbox_id, content, status, poll)
         VALUES (?, ?, ?, 1, '', ?, ?, ?, ?, ?, 'queued', ?)`,
      ),
      setBody: db.prepare('UPDATE chat_messages SET body = ? WHERE device_id = ? AND wa_message_id = ?'),
      statusOf: db.prepare<[string, string], { status: string | null }>('SELECT status FROM chat_messages WHERE device_id = ? AND wa_message_id = ? AND outbox_id IS NOT NULL'),
      setStatus: db.prepare(
        'UPDATE chat_messages SET status = ?, sent_at = coalesce(sent_at, ?), revoked = max(revoked, ?) WHERE device_id = ? AND wa_message_id = ?',
      ),
      setRevoked: db.prepare('UPDATE chat_messages SET revoked = 1 WHERE device_id = ? AND wa_message_id = ?'),
      setRead: db.prepare('UPDATE chat_messages SET read = 1 WHERE device_id = ? AND wa_message_id = ? AND from_me = 0'),
      setMedia: db.prepare('UPDATE chat_messages SET media = ?, media_stored_at = ? WHERE device_id = ? AND wa_message_id = ?'),
      byId: db.prepare<[string, string], Row>(
        `SELECT wa_message_id, chat_id, from_me, sender, type, body, outbox_id, content, status, sent_at, revoked, media, media_stored_at, received
         FROM chat_messages WHERE device_id = ? AND wa_message_id = ?`,
      ),
      unread: db.prepare<[string, string, number], { wa_message_id: string; participant: string | null }>(
        'SELECT wa_message_id, participant FROM chat_messages WHERE device_id = ? AND chat_id = ? AND from_me = 0 AND read = 0 ORDER BY at LIMIT ?',
      ),
      participant: db.prepare<[string, string], { chat_id: string; from_me: number; participant: string | null }>(
        'SELECT chat_id, from_me, participant FROM chat_messages WHERE device_id = ? AND wa_message_id = ?',
      ),
      poll: db.prepare<[string, string], { poll: string | null }>('SELECT poll FROM chat_messages WHERE device_id = ? AND wa_message_id = ?'),
      mediaBefore: db.prepare<[number, number, number], { device_id: string; wa_message_id: string; media_stored_at: number }>(
        'SELECT device_id, wa_message_id, media_stored_at FROM chat_messages WHERE media_stored_at > ? AND media_stored_at < ? ORDER BY media_stored_at LIMIT ?',
      ),
    };
  }
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
