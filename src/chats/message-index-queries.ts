/**
 * The message index's queries: the conversations (GET /chats, /chats/:chatId/messages, /messages/:waMessageId)
 * as views (message-views.ts), the unread messages and who sent one (read receipts), a poll's secret (votes).
 */
import type Database from 'better-sqlite3';
import type { ChatMessageRef } from '../engines/engine.js';
import type { InboundType } from '../messages/message-events.js';
import { ROW_COLUMNS, type Row } from './message-index-schema.js';
import { type JsonPage, MessagePageJson } from './message-page-json.js';
import { SearchKeys } from './message-search-keys.js';
import { SearchMatch } from './message-search-match.js';
import { ChatSearch } from './message-search-chat.js';
import { LimitedStatements } from '../storage/limited-statements.js';
import {
  CHAT_LIST,
  type ChatListOptions,
  ChatListJson,
  type JsonChatList,
  chatListOrder,
  chatListWhere,
} from './chat-list-json.js';
import {
  type ChatListRow,
  type ChatView,
  type MessageDetail,
  type MessageView,
  type Page,
  type PageKey,
  type PageRow,
  type StatusEntry,
  chatViewOf,
  statusEntryOf,
  viewOf,
} from './message-views.js';

export class MessageIndexQueries {
  private statements: ReturnType<MessageIndexQueries['prepare']> | undefined;
  /** Chat list statements by their text (one per combination of filters). */
  private readonly chatLists = new Map<string, Database.Statement<Array<string | number>, ChatListRaw>>();
  private readonly searches = new Map<string, Database.Statement<Array<string | bigint>, PageRaw>>();

  private readonly pageJson: MessagePageJson;
  private readonly chatListJson: ChatListJson;
  private readonly searchKeys: SearchKeys;
  private readonly searchMatch: SearchMatch;
  private readonly chatSearch: ChatSearch;

  constructor(private readonly db: Database.Database) {
    this.pageJson = new MessagePageJson(db);
    this.chatListJson = new ChatListJson(db);
    this.searchKeys = new SearchKeys(db);
    this.searchMatch = new SearchMatch(db);
    this.chatSearch = new ChatSearch(db);
  }

  /** One message with its whole life (GET /messages/:waMessageId); reactions included. */
  message(deviceId: string, waMessageId: string): MessageDetail | undefined {
    const raw = this.sql().byId.get(deviceId, waMessageId);
    // Deleted for this account: gone for it.
    if (!raw) return undefined;
    const row = rowOf(raw);
    const view: MessageDetail = viewOf(deviceId, row);
    if (row.outbox_id !== null) {
      view.outboxId = row.outbox_id;
      view.statusHistory = this.sql()
        .statuses.all(row.last_status)
        .map((s) => statusEntryOf({ status: s[0], at: s[1], error: s[2] }));
    }
    return view;
  }

  /** The text (or caption, file name…) of some messages, by waMessageId; those it does not know are left out. */
  bodies(deviceId: string, waMessageIds: readonly string[]): Map<string, string> {
    if (waMessageIds.length === 0) return new Map();
    const rows = this.sql().bodies.all(deviceId, JSON.stringify(waMessageIds));
    return new Map(rows.map((row) => [row.wa_message_id, row.body]));
  }

  /**
   * A chat's messages, newest first, a page after `after` (keyset: timestamp, then log position); those deleted for
   * this account, and those recorded before the chat was cleared or deleted, are left out.
   */
  messages(deviceId: string, chatId: string, options: { limit: number; after?: PageKey }): Page<MessageView> {
    const sql = this.sql();
    const cleared = sql.clearedKey.get(deviceId, chatId) ?? { cleared_at: 0, cleared_pos: 0 };
    const { cleared_at: clearedAt, cleared_pos: clearedPos } = cleared;
    const rows = options.after
      ? sql.chatPageAfter
          .limit(options.limit + 1)
          .all(deviceId, chatId, clearedAt, clearedPos, options.after.at, options.after.pos)
      : sql.chatPage.limit(options.limit + 1).all(deviceId, chatId, clearedAt, clearedPos);
    const page = rows.slice(0, options.limit).map(pageRowOf);
    const last = page[page.length - 1];
    return {
      items: page.map((row) => viewOf(deviceId, row)),
      next: rows.length > options.limit && last ? { at: last.at, pos: last.pos } : null,
    };
  }

  /** The page messages() answers, as JSON text, with this account's number (`phone`) in its own messages. */
  messagesJson(
    deviceId: string,
    chatId: string,
    options: { limit: number; after?: PageKey; phone: string | undefined },
  ): JsonPage {
    const cleared = this.sql().clearedKey.get(deviceId, chatId);
    return this.pageJson.page(deviceId, chatId, {
      limit: options.limit,
      ...(options.after ? { after: options.after } : {}),
      cleared: cleared ? { at: cleared.cleared_at, pos: cleared.cleared_pos } : { at: 0, pos: 0 },
      phone: options.phone ?? '',
    });
  }

  /**
   * Messages whose text, caption, file name or poll question holds every word of `q` (as a word or the start of
   * one; case and accents folded), newest first, a page after `after`; optionally of one chat.
   */
  search(deviceId: string, q: string, options: { chatId?: string; limit: number; after?: PageKey }): Page<MessageView> {
    const words = q.match(/[\p{L}\p{N}_]+/gu) ?? [];
    if (words.length === 0) return { items: [], next: null };
    const match = this.searchMatch.of(words);
    if (options.chatId !== undefined) return this.searchChat(deviceId, options.chatId, match, options);
    const where = ['chat_messages_search MATCH ?', 'm.device_id = ?', 'm.deleted = 0'];
    const args: Array<string | bigint> = [match, deviceId];
    if (options.chatId !== undefined) {
      where.push('m.chat_id = ?');
      args.push(options.chatId);
    }
    if (options.after) {
      where.push('f.rowid < ?');
      // An integer: FTS5 seeks to a bound it is given as one, and walks every hit before any other.
      args.push(BigInt(this.searchKeys.boundAfter(options.after.at, options.after.pos)));
    }
    // The hits in the order of their keys (message-search-keys.ts: time, then position), newest first: FTS5 walks
    // them in that order and the scan stops at the page's end, however many match (CROSS JOIN keeps the index the
    // outer loop). Only the page's rows are read whole.
    const text = `SELECT ${PAGE} FROM (
        SELECT f.rowid AS hit_key, m.pos AS hit_pos
        FROM chat_messages_search f
        CROSS JOIN chat_messages_search_keys k ON k.key = f.rowid
        CROSS JOIN chat_messages m ON m.pos = k.pos
        LEFT JOIN chats c ON c.device_id = m.device_id AND c.chat_id = m.chat_id
        WHERE ${where.join(' AND ')} AND (m.at, m.pos) > (coalesce(c.cleared_at, 0), coalesce(c.cleared_pos, 0))
        ORDER BY f.rowid DESC LIMIT ${limitOf(options.limit + 1)}
      ) JOIN chat_messages ON pos = hit_pos ORDER BY hit_key DESC`;
    let statement = this.searches.get(text);
    if (!statement) {
      statement = this.db.prepare<Array<string | bigint>, PageRaw>(text).raw(true);
      this.searches.set(text, statement);
    }
    const rows = statement.all(...args);
    const page = rows.slice(0, options.limit).map(pageRowOf);
    const last = page[page.length - 1];
    return {
      items: page.map((row) => viewOf(deviceId, row)),
      next: rows.length > options.limit && last ? { at: last.at, pos: last.pos } : null,
    };
  }

  /** search() in one chat (message-search-chat.ts). */
  private searchChat(deviceId: string, chatId: string, match: string, options: { limit: number; after?: PageKey }) {
    const cleared = this.sql().clearedKey.get(deviceId, chatId);
    const positions = this.chatSearch.positions({
      deviceId,
      chatId,
      match,
      below: options.after ? BigInt(this.searchKeys.boundAfter(options.after.at, options.after.pos)) : undefined,
      cleared: cleared ? { at: cleared.cleared_at, pos: cleared.cleared_pos } : { at: 0, pos: 0 },
      count: options.limit + 1,
    });
    const wanted = positions.slice(0, options.limit);
    const rows = new Map(
      this.sql()
        .rowsAt.all(JSON.stringify(wanted))
        .map((raw) => [raw[8], pageRowOf(raw)] as const),
    );
    const page = wanted.flatMap((pos) => rows.get(pos) ?? []);
    const last = page[page.length - 1];
    return {
      items: page.map((row) => viewOf(deviceId, row)),
      next: positions.length > options.limit && last ? { at: last.at, pos: last.pos } : null,
    };
  }

  /** A device's chats, most recent activity first (deleted ones left out), filtered by their settings and labels. */
  chats(deviceId: string, options: ChatListOptions): Page<ChatView> {
    const { where, args } = chatListWhere(deviceId, options);
    const text = `${CHAT_LIST} WHERE ${where} ${chatListOrder(options.limit + 1)}`;
    let statement = this.chatLists.get(text);
    if (!statement) {
      statement = this.db.prepare<Array<string | number>, ChatListRaw>(text).raw(true);
      this.chatLists.set(text, statement);
    }
    const rows = statement.all(...args);
    const page = rows.slice(0, options.limit).map(chatListRowOf);
    const last = page[page.length - 1];
    return {
      items: page.map(chatViewOf),
      next: rows.length > options.limit && last ? { at: last.last_at, pos: last.last_pos } : null,
    };
  }

  /** The page chats() answers, as JSON text (src/chats/chat-list-json.ts). */
  chatsJson(deviceId: string, options: ChatListOptions): JsonChatList {
    return this.chatListJson.page(deviceId, options);
  }

  /** Whether the device has a chat with this id (GET /chats/:chatId/messages of an unknown chat is an empty page). */
  hasChat(deviceId: string, chatId: string): boolean {
    return this.sql().chatExists.get(deviceId, chatId) !== undefined;
  }

  /** One chat as GET /chats shows it (also a deleted one), or undefined. */
  chat(deviceId: string, chatId: string): ChatView | undefined {
    const row = this.sql().chatById.get(deviceId, chatId);
    return row && chatViewOf(chatListRowOf(row));
  }

  /** The chat's latest message (WhatsApp addresses archive, read state, delete and clear by it). */
  lastMessageOf(deviceId: string, chatId: string): ChatMessageRef | undefined {
    const row = this.sql().lastMessage.get(deviceId, chatId);
    return row && refOf(row);
  }

  /**
   * The chat's oldest message the index holds, deleted or cleared ones included (the phone knows them: an on-demand
   * history request starts there); reactions left out.
   */
  oldestMessageOf(deviceId: string, chatId: string): ChatMessageRef | undefined {
    const row = this.sql().oldestMessage.get(deviceId, chatId);
    return row && refOf(row);
  }

  /** A message this account has not deleted for itself: its chat and how WhatsApp addresses it. */
  messageRef(deviceId: string, waMessageId: string): { chatId: string; ref: ChatMessageRef } | undefined {
    const row = this.sql().ref.get(deviceId, waMessageId);
    return row && { chatId: row.chat_id, ref: refOf(row) };
  }

  /** Received messages of a chat not yet read by this device, oldest first. */
  unread(deviceId: string, chatId: string, limit = 1_000): Array<{ waMessageId: string; participant?: string }> {
    return this.sql()
      .unread.limit(limit)
      .all(deviceId, chatId)
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

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      // A message's history: from its newest entry back along `prev`, then oldest first.
      // Rows as arrays, shaped once by the code that reads them: better-sqlite3's row objects cost more than the lookup.
      statuses: db
        .prepare<[number | null], [StatusEntry['status'], string, string | null]>(
          `WITH RECURSIVE history (pos, prev, status, at, error) AS (
           SELECT pos, prev, status, at, error FROM chat_message_statuses WHERE pos = ?
           UNION ALL SELECT s.pos, s.prev, s.status, s.at, s.error FROM chat_message_statuses s JOIN history h ON s.pos = h.prev
         ) SELECT status, at, error FROM history ORDER BY pos`,
        )
        .raw(true),
      bodies: db.prepare<[string, string], { wa_message_id: string; body: string }>(
        'SELECT wa_message_id, body FROM chat_messages WHERE device_id = ? AND wa_message_id IN (SELECT value FROM json_each(?))',
      ),
      byId: db
        .prepare<[string, string], RowRaw>(
          `SELECT ${ROW_COLUMNS} FROM chat_messages WHERE device_id = ? AND wa_message_id = ? AND deleted = 0`,
        )
        .raw(true),
      // Page rows by position (a JSON array).
      rowsAt: db
        .prepare<[string], PageRaw>(`SELECT ${PAGE} FROM chat_messages WHERE pos IN (SELECT value FROM json_each(?))`)
        .raw(true),
      clearedKey: db.prepare<[string, string], { cleared_at: number; cleared_pos: number }>(
        'SELECT cleared_at, cleared_pos FROM chats WHERE device_id = ? AND chat_id = ?',
      ),
      chatById: db
        .prepare<[string, string], ChatListRaw>(`${CHAT_LIST} WHERE c.device_id = ? AND c.chat_id = ?`)
        .raw(true),
      lastMessage: db.prepare<[string, string], RefRow>(
        `SELECT m.wa_message_id, m.from_me, m.participant, m.at FROM chats c JOIN chat_messages m
           ON m.device_id = c.device_id AND m.wa_message_id = c.last_wa_message_id WHERE c.device_id = ? AND c.chat_id = ?`,
      ),
      // By chat_messages_by_chat (partial: reactions are out of it, as here).
      oldestMessage: db.prepare<[string, string], RefRow>(
        "SELECT wa_message_id, from_me, participant, at FROM chat_messages WHERE device_id = ? AND chat_id = ? AND type <> 'reaction' ORDER BY at, pos LIMIT 1",
      ),
      ref: db.prepare<[string, string], RefRow & { chat_id: string }>(
        'SELECT wa_message_id, chat_id, from_me, participant, at FROM chat_messages WHERE device_id = ? AND wa_message_id = ? AND deleted = 0',
      ),
      // Rows as arrays of the columns a view needs: a page is 50 rows, and objects of 20 columns cost more than the query.
      // LIMIT in the text (src/storage/limited-statements.ts): a bound one made SQLite plan the query at every run.
      chatPage: new LimitedStatements<[string, string, number, number], PageRaw>(
        db,
        `SELECT ${PAGE} FROM chat_messages WHERE device_id = ? AND chat_id = ? AND type <> 'reaction' AND deleted = 0 AND (at, pos) > (?, ?) ORDER BY at DESC, pos DESC`,
        true,
      ),
      chatPageAfter: new LimitedStatements<[string, string, number, number, number, number], PageRaw>(
        db,
        `SELECT ${PAGE} FROM chat_messages WHERE device_id = ? AND chat_id = ? AND type <> 'reaction' AND deleted = 0 AND (at, pos) > (?, ?) AND (at, pos) < (?, ?) ORDER BY at DESC, pos DESC`,
        true,
      ),
      chatExists: db.prepare<[string, string], { one: number }>(
        'SELECT 1 AS one FROM chats WHERE device_id = ? AND chat_id = ?',
      ),
      unread: new LimitedStatements<[string, string], { wa_message_id: string; participant: string | null }>(
        db,
        // Reactions are shown on their message, not counted unread, and get no receipts.
        "SELECT wa_message_id, participant FROM chat_messages WHERE device_id = ? AND chat_id = ? AND from_me = 0 AND read = 0 AND type <> 'reaction' ORDER BY at",
      ),
      participant: db.prepare<
        [string, string],
        { chat_id: string; from_me: number; participant: string | null; read: number }
      >('SELECT chat_id, from_me, participant, read FROM chat_messages WHERE device_id = ? AND wa_message_id = ?'),
      poll: db.prepare<[string, string], { poll: string | null }>(
        'SELECT poll FROM chat_messages WHERE device_id = ? AND wa_message_id = ?',
      ),
    };
  }
}

/** A limit written into a statement's text (a bound one is planned again at every run: src/storage/limited-statements.ts). */
function limitOf(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`not a limit: ${limit}`);
  return limit;
}

interface RefRow {
  wa_message_id: string;
  from_me: number;
  participant: string | null;
  at: number;
}

function refOf(row: RefRow): ChatMessageRef {
  return {
    waMessageId: row.wa_message_id,
    fromMe: row.from_me === 1,
    ...(row.participant ? { participant: row.participant } : {}),
    timestamp: row.at,
  };
}

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
  number,
  string | null,
  number,
];
const PAGE = `wa_message_id, chat_id, from_me, sender, participant, type, body, at, pos, status, revoked, edited, media, quoted, reactions,
  CASE WHEN media IS NULL AND type IN ('image', 'video', 'audio', 'file', 'sticker') THEN content END AS content, media_stored_at,
  starred, pinned_until, historical`;

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
    starred: r[17],
    pinned_until: r[18],
    historical: r[19],
  };
}

type ChatListRaw = [
  string,
  string | null,
  number,
  string,
  number,
  number,
  number,
  InboundType,
  string,
  number,
  number,
  number,
  string | null,
  number,
  string | null,
  number,
  number,
];

/** CHAT_LIST's columns, in its order. */
function chatListRowOf(r: ChatListRaw): ChatListRow {
  return {
    chat_id: r[0],
    name: r[1],
    unread: r[2],
    last_wa_message_id: r[3],
    last_at: r[4],
    last_pos: r[5],
    from_me: r[6],
    type: r[7],
    body: r[8],
    revoked: r[9],
    archived: r[10],
    pinned: r[11],
    muted_until: r[12],
    marked_unread: r[13],
    labels: r[14],
    cleared_at: r[15],
    cleared_pos: r[16],
  };
}

type RowRaw = [
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
  string | null,
  string | null,
  number | null,
  number,
  number,
  string | null,
  number | null,
  string | null,
  string | null,
  string | null,
  number | null,
  number,
  string | null,
  number,
];

/** ROW_COLUMNS, in its order. */
function rowOf(r: RowRaw): Row {
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
    outbox_id: r[9],
    content: r[10],
    status: r[11],
    sent_at: r[12],
    revoked: r[13],
    edited: r[14],
    media: r[15],
    media_stored_at: r[16],
    received: r[17],
    quoted: r[18],
    reactions: r[19],
    last_status: r[20],
    starred: r[21],
    pinned_until: r[22],
    historical: r[23],
  };
}
