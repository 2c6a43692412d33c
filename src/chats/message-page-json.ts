/**
 * A chat's page of messages (GET /chats/:chatId/messages) as JSON text made by SQLite: each row's view is one
 * string built in the query, so a page costs three values a row instead of twenty, and no view object is made
 * and walked again by JSON.stringify (issue 37). Rows whose view needs more than their columns (sent media,
 * described from the queued content; this account's own reactions where its number is shown) come back NULL
 * and are made by viewOf, as MessageIndexQueries.messages() makes every row: the two answer the same JSON.
 */
import type Database from 'better-sqlite3';
import { LimitedStatements } from '../storage/limited-statements.js';
import { type PageKey, type PageRow, viewOf, withOwnPhone } from './message-views.js';

/** A page as JSON text: `items` is the text of the array of views. */
export interface JsonPage {
  items: string;
  next: PageKey | null;
}

type Raw = [string | null, number, number];

/** Booleans as JSON (JS tests `=== 1`). */
const bool = (column: string) => `iif(${column} = 1, 'true', 'false')`;

/**
 * One row's view as JSON, in viewOf's key order, strings quoted by json_quote (the same bytes as JSON.stringify),
 * JSON columns (written by JSON.stringify) put in as they are, in one concat() (`||` copies the growing text at
 * each step); NULL where viewOf must make it.
 */
const VIEW_JSON = `CASE
  WHEN (media IS NULL AND content IS NOT NULL AND type IN ('image', 'video', 'audio', 'file', 'sticker'))
    OR typeof(at) <> 'integer' OR abs(at) > 9007199254740991
    OR (? <> '' AND reactions LIKE '%"fromMe":true%') THEN NULL
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
    const rows = after
      ? sql.after
          .limit(limit + 1)
          .all(phone, phone, phone, deviceId, chatId, cleared.at, cleared.pos, after.at, after.pos)
      : sql.first.limit(limit + 1).all(phone, phone, phone, deviceId, chatId, cleared.at, cleared.pos);
    const count = Math.min(rows.length, limit);
    let items = '[';
    for (let i = 0; i < count; i++) {
      const [json, , pos] = rows[i];
      if (i > 0) items += ',';
      items += json ?? this.viewJson(deviceId, pos, phone);
    }
    const last = count > 0 ? rows[count - 1] : undefined;
    return { items: `${items}]`, next: rows.length > limit && last ? { at: last[1], pos: last[2] } : null };
  }

  private viewJson(deviceId: string, pos: number, phone: string): string {
    const row = this.statements!.row.get(pos)!;
    return JSON.stringify(withOwnPhone(phone, viewOf(deviceId, row)));
  }

  private prepare() {
    const db = this.db;
    const select = `SELECT ${VIEW_JSON}, at, pos FROM chat_messages WHERE ${WHERE}`;
    return {
      first: new LimitedStatements<[string, string, string, string, string, number, number], Raw>(
        db,
        `${select} ORDER BY at DESC, pos DESC`,
        true,
      ),
      after: new LimitedStatements<[string, string, string, string, string, number, number, number, number], Raw>(
        db,
        `${select} AND (at, pos) < (?, ?) ORDER BY at DESC, pos DESC`,
        true,
      ),
      row: db.prepare<[number], PageRow>(`SELECT ${ROW} FROM chat_messages WHERE pos = ?`),
    };
  }
}
