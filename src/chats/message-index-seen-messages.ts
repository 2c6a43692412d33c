/**
 * The outbox's port to the messages a device has seen (src/outbox/seen-messages.ts: replies, forwards, edits),
 * read from the message index.
 */
import type Database from 'better-sqlite3';
import type { InboundMedia } from '../messages/message-events.js';
import type { QueuedContent } from '../outbox/stream/outbox-events.js';
import type { QuotedMessage, SeenMessage, SeenMessages } from '../outbox/commands/seen-messages.js';
import { ROW_COLUMNS, type Row } from './message-index-schema.js';

export class IndexedSeenMessages implements SeenMessages {
  private statements: ReturnType<IndexedSeenMessages['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  find(deviceId: string, waMessageId: string): SeenMessage | undefined {
    const row = this.sql().byId.get(deviceId, waMessageId);
    return row && seenOf(row);
  }

  /** The columns a reply needs (five, not a whole row: read on every send with `replyTo`). */
  quoted(deviceId: string, waMessageId: string): QuotedMessage | undefined {
    const row = this.sql().quoted.get(deviceId, waMessageId);
    return row && { chatId: row.chat_id, fromMe: row.from_me === 1, from: row.sender, type: row.type, body: row.body };
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      byId: db.prepare<[string, string], Row>(
        `SELECT ${ROW_COLUMNS} FROM chat_messages WHERE device_id = ? AND wa_message_id = ?`,
      ),
      quoted: db.prepare<[string, string], Pick<Row, 'chat_id' | 'from_me' | 'sender' | 'type' | 'body'>>(
        'SELECT chat_id, from_me, sender, type, body FROM chat_messages WHERE device_id = ? AND wa_message_id = ?',
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
