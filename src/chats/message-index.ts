/**
 * The message index: one row per message a device sent or received, fed from the log, with what the commands
 * about messages need (chat, sender, text, status, read state, media, a poll's secret); it is also the
 * conversations read model (docs/architecture.md, "Streams, their deciders, writers and read models").
 * This class puts its parts together: the tables (message-index-schema.ts), the projection (message-index-projection.ts,
 * with the version), queries and views (message-index-queries.ts, message-views.ts), the outbox's port
 * (message-index-seen-messages.ts) and what media retention reads (message-index-retention.ts).
 */
import type Database from 'better-sqlite3';
import type { SeenMessages } from '../outbox/commands/seen-messages.js';
import { MessageIndexProjection } from './message-index-projection.js';
import { MessageIndexQueries } from './message-index-queries.js';
import { MessageIndexRetention } from './message-index-retention.js';
import { ReadModelVersion } from '../projections/read-model-version.js';
import { IndexedSeenMessages } from './message-index-seen-messages.js';

export class MessageIndex extends MessageIndexProjection implements SeenMessages {
  private readonly queries: MessageIndexQueries;
  private readonly seen: IndexedSeenMessages;
  private readonly retention: MessageIndexRetention;
  private readonly readModelVersion: ReadModelVersion;

  constructor(db: Database.Database) {
    super(db);
    this.queries = new MessageIndexQueries(db);
    this.seen = new IndexedSeenMessages(db);
    this.retention = new MessageIndexRetention(db);
    this.readModelVersion = new ReadModelVersion(db);
  }

  find(...args: Parameters<IndexedSeenMessages['find']>) {
    return this.seen.find(...args);
  }

  quoted(...args: Parameters<IndexedSeenMessages['quoted']>) {
    return this.seen.quoted(...args);
  }

  /** The read models' state now, for entity tags (undefined: answer untagged). */
  stateTag(): string | undefined {
    return this.readModelVersion.current();
  }

  message(...args: Parameters<MessageIndexQueries['message']>) {
    return this.queries.message(...args);
  }

  bodies(...args: Parameters<MessageIndexQueries['bodies']>) {
    return this.queries.bodies(...args);
  }

  messages(...args: Parameters<MessageIndexQueries['messages']>) {
    return this.queries.messages(...args);
  }

  messagesJson(...args: Parameters<MessageIndexQueries['messagesJson']>) {
    return this.queries.messagesJson(...args);
  }

  chats(...args: Parameters<MessageIndexQueries['chats']>) {
    return this.queries.chats(...args);
  }

  chatsJson(...args: Parameters<MessageIndexQueries['chatsJson']>) {
    return this.queries.chatsJson(...args);
  }

  /** The device's labels (WhatsApp Business), deleted ones left out. */
  labels(deviceId: string) {
    return this.labelTable.list(deviceId);
  }

  /** Every label id the device ever had, deleted ones included. */
  labelIds(deviceId: string) {
    return this.labelTable.ids(deviceId);
  }

  hasChat(...args: Parameters<MessageIndexQueries['hasChat']>) {
    return this.queries.hasChat(...args);
  }

  search(...args: Parameters<MessageIndexQueries['search']>) {
    return this.queries.search(...args);
  }

  chat(...args: Parameters<MessageIndexQueries['chat']>) {
    return this.queries.chat(...args);
  }

  lastMessageOf(...args: Parameters<MessageIndexQueries['lastMessageOf']>) {
    return this.queries.lastMessageOf(...args);
  }

  oldestMessageOf(...args: Parameters<MessageIndexQueries['oldestMessageOf']>) {
    return this.queries.oldestMessageOf(...args);
  }

  messageRef(...args: Parameters<MessageIndexQueries['messageRef']>) {
    return this.queries.messageRef(...args);
  }

  unread(...args: Parameters<MessageIndexQueries['unread']>) {
    return this.queries.unread(...args);
  }

  participantOf(...args: Parameters<MessageIndexQueries['participantOf']>) {
    return this.queries.participantOf(...args);
  }

  poll(...args: Parameters<MessageIndexQueries['poll']>) {
    return this.queries.poll(...args);
  }

  revokedMediaAfter(...args: Parameters<MessageIndexRetention['revokedMediaAfter']>) {
    return this.retention.revokedMediaAfter(...args);
  }

  mediaStoredBefore(...args: Parameters<MessageIndexRetention['mediaStoredBefore']>) {
    return this.retention.mediaStoredBefore(...args);
  }
}
