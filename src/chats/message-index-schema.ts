/**
 * The message index's tables (chat_messages, chats, chat_message_statuses) and their indexes, and the rows it
 * holds in them: what the projection (message-index-projection.ts) writes and the queries read.
 */
import type Database from 'better-sqlite3';
import type { InboundType } from '../messages/message-events.js';
import { type QueuedContent, mediaOf } from '../outbox/stream/outbox-events.js';
import { CHAT_JSON_COLUMNS } from './chat-list-json.js';
import { fillSearchKeys } from './message-search-keys.js';

/** A row of chat_messages as held in memory during a batch (JSON columns as text). */
export interface MessageRow {
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
  /** Starred by this account. */
  starred: number;
  /** Pinned in its chat until (ISO 8601), or null. */
  pinned_until: string | null;
  /** Deleted for this account only: out of the chat's pages. */
  deleted: number;
  /** Imported from the history WhatsApp sent (history sync), not seen live. */
  historical: number;
}

/** The columns the queries read. */
export type Row = Omit<MessageRow, 'device_id' | 'read' | 'poll' | 'revoked_pos' | 'deleted'>;

/** A row of chats. */
export interface ChatRow {
  device_id: string;
  chat_id: string;
  name: string | null;
  last_wa_message_id: string;
  last_at: number;
  last_pos: number;
  unread: number;
  archived: number;
  /** Pinned to the top of the phone's chat list. */
  pinned: number;
  /** null, an ISO 8601 time or "forever". */
  muted_until: string | null;
  /** Marked unread as a whole (on the phone, or PATCH `unread: true`). */
  marked_unread: number;
  /** Deleted for this account: out of the chat list until a new message. */
  deleted: number;
  /**
   * The chat was cleared or deleted at this key (its last message's time then, the clearing event's log position):
   * messages at or before it are out of its pages. A time, not only a position: history imported later brings
   * older messages at higher positions (docs/architecture.md, "Message kinds, chats and received media").
   */
  cleared_at: number;
  cleared_pos: number;
  /** JSON array of label ids (WhatsApp Business), or null. */
  labels: string | null;
  /**
   * The last message's own columns the chat list shows (kept true by the projection: chat-rows.ts), so that a list
   * reads no message row: that search of the message table was half of its query (docs/notes/performance.md).
   */
  last_from_me: number;
  last_type: string;
  last_body: string;
  last_revoked: number;
}

export const MESSAGE_COLUMNS = [
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
  'starred',
  'pinned_until',
  'deleted',
  'historical',
] as const satisfies ReadonlyArray<keyof MessageRow>;
export const CHAT_COLUMNS = [
  'device_id',
  'chat_id',
  'name',
  'last_wa_message_id',
  'last_at',
  'last_pos',
  'unread',
  'archived',
  'pinned',
  'muted_until',
  'marked_unread',
  'deleted',
  'cleared_at',
  'cleared_pos',
  'labels',
  'last_from_me',
  'last_type',
  'last_body',
  'last_revoked',
] as const satisfies ReadonlyArray<keyof ChatRow>;
/** A chat's columns that copy its last message's (chat-rows.ts keeps them true), with the message's column of each. */
const LAST_MESSAGE_COLUMNS: Partial<Record<keyof ChatRow, keyof MessageRow>> = {
  last_from_me: 'from_me',
  last_type: 'type',
  last_body: 'body',
  last_revoked: 'revoked',
};
export const MESSAGE_KEYS = ['pos'] as const;
export const CHAT_KEYS = ['device_id', 'chat_id'] as const;

/** The columns of chat_message_statuses: pos (of the event that recorded it), prev (the entry before), status, at, error (JSON). */
export const STATUS_COLUMNS = ['pos', 'prev', 'status', 'at', 'error'] as const;

/** The columns of `Row`, as a query selects them. */
export const ROW_COLUMNS =
  'wa_message_id, chat_id, from_me, sender, participant, type, body, at, pos, outbox_id, content, status, sent_at, revoked, edited, media, media_stored_at, received, quoted, reactions, last_status, starred, pinned_until, historical';

/** A message's searchable text: its text, caption or poll question, and its file name (received or sent). */
export function searchTextOf(
  type: string,
  body: string,
  media: string | null,
  content: string | null,
  revoked: number,
  deleted: number,
): string {
  if (type === 'reaction' || revoked === 1 || deleted === 1) return '';
  let filename: unknown;
  if (media !== null) filename = (JSON.parse(media) as { filename?: unknown }).filename;
  else if (content !== null && content.includes('"filename"'))
    filename = mediaOf(JSON.parse(content) as QueuedContent)?.filename;
  return typeof filename === 'string' && filename !== '' ? `${body}\n${filename}` : body;
}

/** The SQL function a rebuild fills the search index with (searchTextOf). */
export const SEARCH_TEXT_FUNCTION = 'dmg_search_text';

/**
 * The full-text index of messages (SQLite FTS5, rowid = the message's search key, message-search-keys.ts):
 * contentless (the text is in chat_messages), case and accents folded (`unicode61 remove_diacritics 2`).
 */
export function createSearchTable(db: Database.Database): { recreated: boolean } {
  db.function(SEARCH_TEXT_FUNCTION, { deterministic: true }, (type, body, media, content, revoked, deleted) =>
    searchTextOf(
      type as string,
      body as string,
      media as string | null,
      content as string | null,
      Number(revoked),
      Number(deleted),
    ),
  );
  // Every word is searched as a prefix too: prefix indexes of 2 and 3 characters answer short prefixes without a scan
  // of every term. A table made before them is made again (and filled again by message-search-index.ts).
  const made = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'chat_messages_search'").pluck().get() as
    string | undefined;
  const recreated = made !== undefined && !made.includes('prefix');
  if (recreated) db.exec('DROP TABLE chat_messages_search');
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS chat_messages_search USING fts5(
    text, content = '', contentless_delete = 1, tokenize = "unicode61 remove_diacritics 2", prefix = '2 3'
  )`);
  return { recreated };
}

/**
 * FTS5 writes the terms it gathers out as a new segment whenever they pass its `hashsize` (1 MiB by default), and
 * merges segments as they pile up: a fill of 200,000 texts wrote some 2,000 segment rows. With 16 MiB it writes half
 * as many and spends a quarter less CPU; a batch's few texts go out at its commit either way.
 */
const FILL_HASH_BYTES = 16 * 1024 * 1024;
const DEFAULT_HASH_BYTES = 1024 * 1024;

/** Fills the (emptied) search index and its keys from the message table, in key order. */
export function fillSearchTable(db: Database.Database): void {
  // searchTextOf in SQL where it answers the body (no media, no file name): a call into JavaScript per message
  // only for the others.
  const text = `CASE WHEN type <> 'reaction' AND revoked = 0 AND deleted = 0 AND media IS NULL
    AND (content IS NULL OR instr(content, '"filename"') = 0) THEN body
    ELSE ${SEARCH_TEXT_FUNCTION}(type, body, media, content, revoked, deleted) END`;
  fillSearchKeys(db, text);
  // In the text: FTS5 takes only an integer, and a bound JavaScript number is a REAL.
  const hashSize = (bytes: number) =>
    db.exec(`INSERT INTO chat_messages_search (chat_messages_search, rank) VALUES ('hashsize', ${bytes})`);
  hashSize(FILL_HASH_BYTES);
  db.exec(`INSERT INTO chat_messages_search (rowid, text)
    SELECT k.key, ${text} FROM chat_messages_search_keys k JOIN chat_messages m ON m.pos = k.pos ORDER BY k.key`);
  // Not in a `finally`: a failed fill rolls the caller's transaction back, the setting's row with it (a write after the
  // failure would only hide its error).
  hashSize(DEFAULT_HASH_BYTES);
}

/** Creates the tables and their indexes where missing (a projection's setup). */
export function createMessageIndexTables(db: Database.Database): void {
  // Rows are keyed by the log position of the event that recorded them (`pos`): a rebuild appends them in
  // key order, and rows of a few hundred bytes sit better in a rowid table than in a key-ordered one.
  // A table of version 1 lacks the new columns, one of version 2 holds each status history as JSON (every
  // status change rewrote the growing list), one of version 4 lacks revoked_pos: dropped, and the runner
  // rebuilds this read model (version changed).
  // One of version 5 lacks stars, pins, deletions for me and history flags (and its chats their settings).
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('chat_messages') as string[];
  if (columns.length > 0 && !columns.includes('historical')) db.exec('DROP TABLE chat_messages');
  const chatColumns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('chats') as string[];
  // One of version 6 lacks the time a chat was cleared at.
  if (chatColumns.length > 0 && !chatColumns.includes('cleared_at')) db.exec('DROP TABLE chats');
  // One of version 9 lacks its views' JSON (CHAT_JSON_COLUMNS) or its last message's columns (`last_body` …), and one
  // made before their present text has another: SQLite adds generated columns only to a table it makes, so it is made
  // again below and its rows copied (the last message's columns read from its row), no rebuild.
  const chatsSql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'chats'").pluck().get() as
    string | undefined;
  // (One without cleared_at was dropped just above.)
  const remake = chatsSql !== undefined && !chatsSql.includes(CHAT_JSON_COLUMNS);
  if (remake) db.exec('ALTER TABLE chats RENAME TO chats_before; DROP INDEX chats_by_activity');
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
      revoked_pos     INTEGER,
      starred         INTEGER NOT NULL DEFAULT 0,
      pinned_until    TEXT,
      deleted         INTEGER NOT NULL DEFAULT 0,
      historical      INTEGER NOT NULL DEFAULT 0
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
      archived           INTEGER NOT NULL DEFAULT 0,
      pinned             INTEGER NOT NULL DEFAULT 0,
      muted_until        TEXT,
      marked_unread      INTEGER NOT NULL DEFAULT 0,
      deleted            INTEGER NOT NULL DEFAULT 0,
      cleared_at         INTEGER NOT NULL DEFAULT 0,
      cleared_pos        INTEGER NOT NULL DEFAULT 0,
      labels             TEXT,
      last_from_me       INTEGER NOT NULL DEFAULT 0,
      last_type          TEXT NOT NULL DEFAULT 'text',
      last_body          TEXT NOT NULL DEFAULT '',
      last_revoked       INTEGER NOT NULL DEFAULT 0,
      ${CHAT_JSON_COLUMNS},
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
  if (remake) {
    const columns = CHAT_COLUMNS.join(', ');
    // One made before the chats kept their last message's columns (chatColumns: the table as it was before its
    // rename): those are read once from the message rows.
    const copied = chatColumns.includes('last_body')
      ? `SELECT ${columns} FROM chats_before`
      : `SELECT ${CHAT_COLUMNS.map((c) => (LAST_MESSAGE_COLUMNS[c] ? `m.${LAST_MESSAGE_COLUMNS[c]}` : `b.${c}`)).join(', ')}
        FROM chats_before b JOIN chat_messages m
        ON m.pos = b.last_pos AND m.device_id = b.device_id AND m.wa_message_id = b.last_wa_message_id`;
    db.exec(`INSERT INTO chats (${columns}) ${copied}; DROP TABLE chats_before`);
  }
}
