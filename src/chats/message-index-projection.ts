/**
 * The message index's projection: writes its rows (message-index-schema.ts) from the log's message, chat and
 * outbox events, holding them in memory during a batch (src/projections/row-buffer.ts) and writing them at its end.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { isGroupId } from '../messages/chat-id.js';
import type { InboxEvent, MessageReceivedData } from '../inbox/inbox-events.js';
import type { Projection } from '../projections/projection.js';
import { BulkInsert } from '../projections/bulk-insert.js';
import { RowBuffer } from '../projections/row-buffer.js';
import type { OutboxEvent } from '../outbox/stream/outbox-events.js';
import { bodyOfContent, hasStoredMedia, typeOfContent } from './message-content.js';
import { nextStatus } from '../outbox/stream/message-status.js';
import {
  CHAT_COLUMNS,
  CHAT_KEYS,
  type ChatRow,
  MESSAGE_COLUMNS,
  MESSAGE_KEYS,
  type MessageRow,
  STATUS_COLUMNS,
  createMessageIndexTables,
} from './message-index-schema.js';
import { MessageSearchIndex } from './message-search-index.js';
import { type Reaction, isoOf } from './message-views.js';
import { LabelTable, createLabelTable } from './chat-labels.js';
import { applyChatChange, rowKey as key, showOnChat, touchChat } from './chat-rows.js';

type Handled =
  InboxEvent | Extract<OutboxEvent, { type: 'OutboxMessageQueued' | 'OutboxMessageEdited' | 'MessageStatusChanged' }>;
const HANDLED: ReadonlySet<string> = new Set<Handled['type']>([
  'MessageReceived',
  'MessageStatusChanged',
  'OutboxMessageQueued',
  'OutboxMessageEdited',
  'MessageEdited',
  'MessageRevoked',
  'ChatRead',
  'InboundMediaUpdated',
  'ChatUpdated',
  'ChatDeleted',
  'MessageDeleted',
  'MessageStarred',
  'MessagePinned',
  'LabelUpdated',
  'ChatLabelChanged',
  'HistoryImported',
]);
const isHandled = eventGuard<Handled>(HANDLED);

/** Rows kept in memory between batches (src/projections/row-buffer.ts): a message's next status finds its row there. */
const ROWS_KEPT = 5_000;

export class MessageIndexProjection implements Projection {
  readonly name = 'message-index';
  /**
   * 2: chats, positions, reactions, edits, quotes and status histories. 3: status histories in a table of their own.
   * 4: edits, revokes and reactions only from the right party and chat. 5: where each revoke is (`revoked_pos`),
   * and the kept media of sent messages (`media_stored_at` set by `sent`, `revoked_pos` by `deleted`). 6: chat settings
   * (archived, pinned, muted, marked unread, deleted or cleared, labels), stars, pins and deletions for me of messages,
   * history sync (`historical`). 7: a chat cleared or deleted keeps the time it was cleared at (`cleared_at`), and
   * history imported later neither brings back its older messages nor the deleted chat; labels (`chat_labels`, and
   * `chats.labels` written). 9: the search index keyed by time order (chat_messages_search_keys).
   */
  readonly version = 9;
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
  private statements: ReturnType<MessageIndexProjection['prepare']> | undefined;
  private buffers: { messages: RowBuffer<MessageRow>; chats: RowBuffer<ChatRow> } | undefined;
  /** Rows new in the batch, and its status history entries, inserted at its end. */
  private readonly inserts: { messages: BulkInsert; chats: BulkInsert; statuses: BulkInsert };
  /** UPDATE statements by the columns they set. */
  private readonly updates = new Map<string, Database.Statement>();
  private readonly searchIndex: MessageSearchIndex;
  /** The device's labels (GET /labels reads them through MessageIndex). */
  protected readonly labelTable: LabelTable;

  constructor(private readonly db: Database.Database) {
    this.inserts = {
      messages: new BulkInsert(db, 'INSERT INTO chat_messages', MESSAGE_COLUMNS),
      chats: new BulkInsert(db, 'INSERT INTO chats', CHAT_COLUMNS, { keyColumns: 2 }),
      statuses: new BulkInsert(db, 'INSERT INTO chat_message_statuses', STATUS_COLUMNS),
    };
    this.labelTable = new LabelTable(db);
    this.searchIndex = new MessageSearchIndex(db);
  }

  setup(db: Database.Database): void {
    createMessageIndexTables(db);
    createLabelTable(db);
    this.searchIndex.setup(db);
  }

  reset(db: Database.Database): void {
    this.discard();
    db.exec('DELETE FROM chat_messages; DELETE FROM chats; DELETE FROM chat_message_statuses; DELETE FROM chat_labels');
    this.searchIndex.reset(db);
    const { messages, chats } = this.rows();
    messages.emptied();
    chats.emptied();
  }

  caughtUp(): void {
    this.buffers?.messages.caughtUp();
    this.buffers?.chats.caughtUp();
    this.searchIndex.caughtUp();
  }

  apply(stored: StoredEvent): void {
    if (!isHandled(stored)) return;
    const event = stored;
    const { messages, chats } = this.rows();
    switch (event.type) {
      case 'MessageReceived':
        this.receive(event.data, stored, false);
        return;
      case 'HistoryImported': {
        // The event's data as it is (receive() reads the fields of a message): no copy per message.
        const message = event.data;
        const chatName = message.chatName;
        this.receive(message, stored, true);
        const chatKey = key(message.deviceId, message.chatId ?? message.from);
        const chat = chatName === undefined ? undefined : chats.get(chatKey);
        if (chat && chat.name === null && !isGroupId(chat.chat_id)) {
          chat.name = chatName!;
          chats.put(chatKey, chat);
        }
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
          starred: 0,
          pinned_until: null,
          deleted: 0,
          historical: 0,
        };
        messages.put(id, row);
        this.inserts.statuses.add(stored.position, null, 'queued', d.createdAt, null);
        if (content.kind === 'reaction') {
          this.react(d.deviceId, content.messageId, d.to, { from: '', fromMe: true, emoji: content.emoji });
          return;
        }
        touchChat(this.rows().chats, row, undefined);
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
          if (status === 'deleted') {
            row.revoked = 1;
            showOnChat(chats, row);
          }
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
        showOnChat(chats, row);
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
      case 'ChatUpdated':
      case 'ChatDeleted':
      case 'MessageDeleted':
      case 'MessageStarred':
      case 'MessagePinned':
        applyChatChange(this.rows(), event, stored.position);
        return;
      case 'LabelUpdated':
        this.labelTable.apply(event.data);
        return;
      case 'ChatLabelChanged':
        applyChatChange(this.rows(), event, stored.position);
        return;
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
    this.searchIndex.flush();
  }

  discard(): void {
    this.buffers?.messages.discard();
    this.buffers?.chats.discard();
    for (const insert of Object.values(this.inserts)) insert.discard();
    this.searchIndex.discard();
  }

  /**
   * A received message, live or from the history (`historical`: shown as read, and a chat's name is not taken from
   * it). A message the index has already (a live one the history brings again) is kept as it is.
   */
  private receive(d: MessageReceivedData, stored: StoredEvent, historical: boolean): void {
    const { messages } = this.rows();
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
      read: historical ? 1 : 0,
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
      starred: 0,
      pinned_until: null,
      deleted: 0,
      historical: historical ? 1 : 0,
    };
    // A history message is written and forgotten: imports bring many at once, and the next change to any is rare.
    if (historical) messages.putOnce(id, row);
    else messages.put(id, row);
    if (d.type === 'reaction') {
      if (d.reaction)
        this.react(d.deviceId, d.reaction.messageId, row.chat_id, {
          from: d.fromMe ? '' : d.from,
          fromMe: d.fromMe === true,
          emoji: d.reaction.emoji,
        });
      return;
    }
    touchChat(this.rows().chats, row, d.fromMe || d.isGroup || !d.pushName ? undefined : d.pushName, !historical);
  }

  /** How many rows it holds in memory between batches (bounded: ROWS_KEPT each, and no history message). */
  heldRows(): { messages: number; chats: number } {
    return { messages: this.buffers?.messages.size ?? 0, chats: this.buffers?.chats.size ?? 0 };
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
    // An event that does not say who made it (written before `fromMe` was, src/inbox/inbox-upcasters.ts)
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
    showOnChat(this.rows().chats, row);
  }

  private rows() {
    if (this.buffers) return this.buffers;
    const sql = this.sql();
    const split = (k: string) => k.split('\u0000') as [string, string];
    this.buffers = {
      messages: new RowBuffer<MessageRow>(
        (k, pos) => (pos === undefined ? sql.messageRow.get(...split(k)) : sql.messageRowAt.get(pos as number)),
        (row, stored, saved) => {
          this.searchIndex.note(row, stored ? saved : undefined);
          if (stored) this.update('chat_messages', MESSAGE_COLUMNS, MESSAGE_KEYS, row, saved!);
          else this.inserts.messages.addObject(row);
        },
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
    return {
      messageRow: db.prepare<[string, string], MessageRow>(
        `SELECT ${MESSAGE_COLUMNS.join(', ')} FROM chat_messages WHERE device_id = ? AND wa_message_id = ?`,
      ),
      messageRowAt: db.prepare<[number], MessageRow>(
        `SELECT ${MESSAGE_COLUMNS.join(', ')} FROM chat_messages WHERE pos = ?`,
      ),
      chatRow: db.prepare<[string, string], ChatRow>(
        `SELECT ${CHAT_COLUMNS.join(', ')} FROM chats WHERE device_id = ? AND chat_id = ?`,
      ),
    };
  }
}
