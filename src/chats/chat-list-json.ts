/**
 * A device's chat list (GET /chats) as JSON text made by SQLite, as message-page-json.ts makes a chat's page: each
 * chat's view is one string built in the query, so no row object nor view object is made and walked again by
 * JSON.stringify (issue 37). A chat whose view SQLite cannot write as chatViewOf does (a time that is not a whole
 * number, or outside the years 0000–9999) comes back as NUL and its id, and is made by chatViewOf: the two answer the
 * same JSON (test/chats/chat-list-json.test.ts holds it, byte for byte).
 */
import type Database from 'better-sqlite3';
import { type ChatListRow, type PageKey, chatViewOf } from './message-views.js';

/**
 * A chat with its last message's current state (edits and revokes show): the chat's row keeps what the list shows of
 * it (`last_from_me` …, kept true by chat-rows.ts), so a list reads no message row.
 */
export const CHAT_LIST = `SELECT c.chat_id, c.name, c.unread, c.last_wa_message_id, c.last_at, c.last_pos,
  c.last_from_me AS from_me, c.last_type AS type, c.last_body AS body, c.last_revoked AS revoked,
  c.archived, c.pinned, c.muted_until, c.marked_unread, c.labels, c.cleared_at, c.cleared_pos
  FROM chats c`;

/** GET /chats?archived&pinned&unread&label (each optional). */
export interface ChatFilter {
  archived?: boolean;
  pinned?: boolean;
  unread?: boolean;
  label?: string;
}

export interface ChatListOptions {
  limit: number;
  after?: PageKey;
  filter?: ChatFilter;
}

/** A chat list as JSON text: `items` is the text of the array of views. */
export interface JsonChatList {
  items: string;
  next: PageKey | null;
}

/**
 * The WHERE clause of a device's chat list (deleted chats left out), its filters and the page key, with its
 * arguments; the filters' values are written into the text (a statement each), the label and the key bound.
 */
export function chatListWhere(
  deviceId: string,
  options: ChatListOptions,
): { where: string; args: Array<string | number> } {
  const filter = options.filter ?? {};
  const where = ['c.device_id = ?', 'c.deleted = 0'];
  const args: Array<string | number> = [deviceId];
  if (filter.archived !== undefined) where.push(`c.archived = ${filter.archived ? 1 : 0}`);
  if (filter.pinned !== undefined) where.push(`c.pinned = ${filter.pinned ? 1 : 0}`);
  if (filter.unread !== undefined)
    where.push(filter.unread ? '(c.unread > 0 OR c.marked_unread = 1)' : '(c.unread = 0 AND c.marked_unread = 0)');
  if (filter.label !== undefined) {
    where.push('EXISTS (SELECT 1 FROM json_each(c.labels) WHERE value = ?)');
    args.push(filter.label);
  }
  if (options.after) {
    where.push('(c.last_at, c.last_pos) < (?, ?)');
    args.push(options.after.at, options.after.pos);
  }
  return { where: where.join(' AND '), args };
}

/** The list's order, and its LIMIT written into the text (a bound one is planned again at every run). */
export function chatListOrder(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`not a limit: ${limit}`);
  return `ORDER BY c.last_at DESC, c.last_pos DESC LIMIT ${limit}`;
}

/** Booleans as JSON (JS tests `=== 1`). */
const bool = (column: string) => `iif(${column} = 1, 'true', 'false')`;

/** The chat id without its '@g.us', and where its '-' is. */
const PREFIX = `substr(chat_id, 1, length(chat_id) - 5)`;
const DASH = `instr(${PREFIX}, '-')`;

/**
 * isGroupId (src/messages/chat-id.ts, `^[0-9]{5,32}(-[0-9]{5,20})?@g\.us$`) in GLOBs and lengths: SQLite has no
 * regular expressions, and a JS function called per row would cost what this file saves.
 */
const IS_GROUP = `(chat_id GLOB '*@g.us' AND ${PREFIX} NOT GLOB '*[^0-9-]*' AND CASE ${DASH}
    WHEN 0 THEN length(${PREFIX}) BETWEEN 5 AND 32
    ELSE ${DASH} - 1 BETWEEN 5 AND 32 AND length(${PREFIX}) - ${DASH} BETWEEN 5 AND 20 AND substr(${PREFIX}, ${DASH} + 1) NOT GLOB '*-*'
  END)`;

/**
 * A time SQLite writes as JSON and toISOString do: a whole number, exact as a double, in the years strftime writes
 * (0000–9999); chatViewOf makes a chat at any other.
 */
const ISO_TIME = `typeof(last_at) = 'integer' AND last_at BETWEEN -62167219200 AND 253402300799`;

/**
 * One chat's view as JSON, in chatViewOf's key order, strings quoted by json_quote (the same bytes as
 * JSON.stringify), the labels (written by JSON.stringify) put in as they are; NULL where chatViewOf must make it.
 * All of it comes from the chat's own row, and is kept in it: three columns SQLite writes with the row
 * (CHAT_JSON_COLUMNS), its head up to the unread count, its last message (from the row's `last_…` columns) and its tail
 * from `updatedAt` on. Made at each page, the head and tail were two thirds of its query, the last message's row half
 * of what remained (docs/notes/performance.md).
 */
const STORED_HEAD = `CASE WHEN ${ISO_TIME} THEN concat('{"chatId":', json_quote(chat_id), ',"isGroup":', iif(${IS_GROUP}, 'true', 'false'),
    iif(name IS NULL OR name = '', NULL, ',"name":' || json_quote(name)), ',"unreadCount":', unread) END`;
const STORED_TAIL = `CASE WHEN ${ISO_TIME} THEN concat(',"updatedAt":"', strftime('%Y-%m-%dT%H:%M:%fZ', last_at, 'unixepoch'),
    '","archived":', ${bool('archived')}, ',"pinned":', ${bool('pinned')},
    ',"mutedUntil":', json_quote(muted_until), ',"unread":', iif(unread > 0 OR marked_unread = 1, 'true', 'false'),
    ',"labels":', iif(labels IS NULL OR labels = '', '[]', labels), '}') END`;

/** Its last message's part of the view (shown when the chat was not cleared since). */
const STORED_LAST = `concat(',"lastMessage":{"waMessageId":', json_quote(last_wa_message_id), ',"fromMe":', ${bool('last_from_me')},
    ',"type":', json_quote(last_type), ',"body":', json_quote(iif(last_revoked, '', last_body)), ',"timestamp":', last_at, '}')`;

/** The chats table's generated columns (src/chats/message-index-schema.ts): a chat's view as JSON in three parts. */
export const CHAT_JSON_COLUMNS = `json_head TEXT GENERATED ALWAYS AS (${STORED_HEAD}) STORED,
      json_last TEXT GENERATED ALWAYS AS (${STORED_LAST}) STORED,
      json_tail TEXT GENERATED ALWAYS AS (${STORED_TAIL}) STORED`;

/** A chat's view, or NUL and its id where chatViewOf must make it. */
const VIEW = `CASE WHEN c.json_head IS NULL THEN char(0) || c.chat_id ELSE concat(c.json_head,
    iif((c.last_at, c.last_pos) > (c.cleared_at, c.cleared_pos), c.json_last, NULL), c.json_tail) END`;

/** How a view starts: its chat id's JSON string comes next, then AFTER_ID (a string holds no unescaped quote). */
const VIEW_START = '{"chatId":';
const AFTER_ID = ',"isGroup":';

/** The statement of a page (one value a row: its view), and its arguments. */
export function chatListJsonQuery(
  deviceId: string,
  options: ChatListOptions,
): { text: string; args: Array<string | number> } {
  const { where, args } = chatListWhere(deviceId, options);
  const text = `SELECT ${VIEW} FROM chats c WHERE ${where} ${chatListOrder(options.limit + 1)}`;
  return { text, args };
}

export class ChatListJson {
  /** Statements by their text (one per combination of filters and limit). */
  private readonly statements = new Map<string, Database.Statement<Array<string | number>, string>>();
  private row: Database.Statement<[string, string], ChatListRow> | undefined;
  private key: Database.Statement<[string, string], [number, number]> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** The page MessageIndexQueries.chats() answers, as JSON. */
  page(deviceId: string, options: ChatListOptions): JsonChatList {
    const { text, args } = chatListJsonQuery(deviceId, options);
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare<Array<string | number>, string>(text).pluck(true);
      this.statements.set(text, statement);
    }
    const views = statement.all(...args);
    const count = Math.min(views.length, options.limit);
    let items = '[';
    for (let i = 0; i < count; i++) {
      const view = views[i];
      if (i > 0) items += ',';
      items += view.charCodeAt(0) === 0 ? this.viewJson(deviceId, view.slice(1)) : view;
    }
    return {
      items: `${items}]`,
      next: views.length > options.limit && count > 0 ? this.keyOf(deviceId, views[count - 1]) : null,
    };
  }

  /** The page key (time, position) of a chat's view: found again by its id, the view's first value. */
  private keyOf(deviceId: string, view: string): PageKey {
    const chatId =
      view.charCodeAt(0) === 0
        ? view.slice(1)
        : (JSON.parse(view.slice(VIEW_START.length, view.indexOf(AFTER_ID))) as string);
    this.key ??= this.db
      .prepare<[string, string], [number, number]>(
        'SELECT last_at, last_pos FROM chats WHERE device_id = ? AND chat_id = ?',
      )
      .raw(true);
    const [at, pos] = this.key.get(deviceId, chatId)!;
    return { at, pos };
  }

  private viewJson(deviceId: string, chatId: string): string {
    this.row ??= this.db.prepare<[string, string], ChatListRow>(`${CHAT_LIST} WHERE c.device_id = ? AND c.chat_id = ?`);
    return JSON.stringify(chatViewOf(this.row.get(deviceId, chatId)!));
  }
}
