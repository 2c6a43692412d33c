/**
 * A chat's page of messages (GET /chats/:chatId/messages) as JSON text made by SQLite: each row's view is one
 * string built in the query, so a page costs three values a row instead of twenty, and no view object is made
 * and walked again by JSON.stringify (issue 37). Rows whose view needs more than their columns (sent media,
 * described from the queued content; this account's own reactions where its number is shown) come back as their
 * position and are made by viewOf, as MessageIndexQueries.messages() makes every row: the two answer the same JSON.
 */
import type Database from 'better-sqlite3';
import { LimitedStatements } from '../storage/limited-statements.js';
import { type PageKey, type PageRow, viewOf, withOwnPhone } from './message-views.js';

/** A page as JSON text: `items` is the text of the array of views. */
export interface JsonPage {
  items: string;
  next: PageKey | null;
}

/** A row's view as JSON, or NUL and the row's position where viewOf must make it. */
type Raw = string;

/** How a view starts: its id's JSON string comes next (JSON.stringify's key order, and VIEW_JSON's). */
const VIEW_START = '{"waMessageId":';
/** What follows that string: a string holds no unescaped quote, so this first occurrence ends the id. */
const AFTER_ID = ',"chatId":';

/** Booleans as JSON (JS tests `=== 1`). */
const bool = (column: string) => `iif(${column} = 1, 'true', 'false')`;

/**
 * One row's view as JSON, in viewOf's key order, strings quoted by json_quote (the same bytes as JSON.stringify),
 * JSON columns (written by JSON.stringify) put in as they are, in one concat() (`||` copies the growing text at
 * each step); NUL and the position where viewOf must make it. One value a row, no array: only the page's last row
 * needs its key, looked up again (keyOf); a page cost ~10 µs less (docs/notes/performance.md).
 */
const VIEW_JSON = `CASE
  WHEN (media IS NULL AND content IS NOT NULL AND type IN ('image', 'video', 'audio', 'file', 'sticker'))
    OR typeof(at) <> 'integer' OR abs(at) > 9007199254740991
    OR (? <> '' AND reactions LIKE '%"fromMe":true%') THEN char(0) || pos
  ELSE concat('{"waMessageId":', json_quote(wa_message_id), ',"chatId":', json_quote(chat_id),
    ',"from":', json_quote(iif(from_me = 1 AND ? <> '', ?, sender)), ',"fromMe":', ${bool('from_me')},
    iif(participant IS NULL OR participant = '', NULL, ',"participant":' || json_quote(participant)),
    ',"type":', json_quote(type), ',"body":', json_quote(iif(revoked, '', body)), ',"timestamp":', at,
    iif(status IS NULL OR status = '', NULL, ',"status":' || json_quote(status)),
    iif(quoted IS NULL OR quoted = '', NULL, ',"quoted":' || quoted),
    iif(media IS NULL OR media = '' OR revoked, NULL, ',"media":' || media),
    ',"reactions":', iif(reactions IS NULL OR reactions = '', '[]', reactions),
    ',"edited":', ${bool('edited')}, ',"revoked":', ${bool('revoked')}, ',"starred":', ${bool('starred')},
    ',"pinnedUntil":', json_quote(pinned_until), ',"historical":', ${bool('historical')}, '}')
  END`;

/** The columns viewOf reads, for the rows it makes (MessageIndexQueries' PAGE). */
const ROW = `wa_message_id, chat_id, from_me, sender, participant, type, body, at, pos, status, revoked, edited, media, quoted,
  reactions, CASE WHEN media IS NULL AND type IN ('image', 'video', 'audio', 'file', 'sticker') THEN content END AS content,
  media_stored_at, starred, pinned_until, historical`;

const WHERE = `device_id = ? AND chat_id = ? AND type <> 'reaction' AND deleted = 0 AND (at, pos) > (?, ?)`;

export class MessagePageJson {
  private statements: ReturnType<MessagePageJson['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  /**
   * The page MessageIndexQueries.messages() answers, as JSON, with this account's number (`phone`, '' when
   * unknown) in its own messages and reactions, as the routes show them.
   */
  page(
    deviceId: string,
    chatId: string,
    options: { limit: number; after?: PageKey; cleared: PageKey; phone: string },
  ): JsonPage {
    const sql = (this.statements ??= this.prepare());
    const { limit, after, cleared, phone } = options;
    // Positional, `phone` once for each of its three places: binding an object's properties by name cost more.
    const views = after
      ? sql.after
          .limit(limit + 1)
          .all(phone, phone, phone, deviceId, chatId, cleared.at, cleared.pos, after.at, after.pos)
      : sql.first.limit(limit + 1).all(phone, phone, phone, deviceId, chatId, cleared.at, cleared.pos);
    const count = Math.min(views.length, limit);
    let items = '[';
    for (let i = 0; i < count; i++) {
      const view = views[i];
      if (i > 0) items += ',';
      items += view.charCodeAt(0) === 0 ? this.viewJson(deviceId, Number(view.slice(1)), phone) : view;
    }
    return {
      items: `${items}]`,
      next: views.length > limit && count > 0 ? this.keyOf(deviceId, views[count - 1]) : null,
    };
  }

  private viewJson(deviceId: string, pos: number, phone: string): string {
    const row = this.statements!.row.get(pos)!;
    return JSON.stringify(withOwnPhone(phone, viewOf(deviceId, row)));
  }

  /** The page key (time, position) of the row a view was made of: by its position, or by its id. */
  private keyOf(deviceId: string, view: string): PageKey {
    const sql = this.statements!;
    if (view.charCodeAt(0) === 0) {
      const pos = Number(view.slice(1));
      return { at: sql.atOf.get(pos)!, pos };
    }
    const id = JSON.parse(view.slice(VIEW_START.length, view.indexOf(AFTER_ID))) as string;
    const [at, pos] = sql.keyById.get(deviceId, id)!;
    return { at, pos };
  }

  private prepare() {
    const db = this.db;
    const select = `SELECT ${VIEW_JSON} FROM chat_messages WHERE ${WHERE}`;
    return {
      first: new LimitedStatements<[string, string, string, string, string, number, number], Raw>(
        db,
        `${select} ORDER BY at DESC, pos DESC`,
        'pluck',
      ),
      after: new LimitedStatements<[string, string, string, string, string, number, number, number, number], Raw>(
        db,
        `${select} AND (at, pos) < (?, ?) ORDER BY at DESC, pos DESC`,
        'pluck',
      ),
      row: db.prepare<[number], PageRow>(`SELECT ${ROW} FROM chat_messages WHERE pos = ?`),
      atOf: db.prepare<[number], number>('SELECT at FROM chat_messages WHERE pos = ?').pluck(true),
      keyById: db
        .prepare<[string, string], [number, number]>(
          'SELECT at, pos FROM chat_messages WHERE device_id = ? AND wa_message_id = ?',
        )
        .raw(true),
    };
  }
}
