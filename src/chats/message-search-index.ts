/**
 * The message index's full-text search part (table chat_messages_search, message-index-schema.ts, under the keys
 * of message-search-keys.ts): the changes of a batch written at its end, and the whole index filled once from the
 * finished message table after a rebuild (or at start, when a rebuild ended before it was filled). Whether it is
 * filled is kept in a table of its own: an empty index is no sign, it is empty too when no message has text.
 */
import type Database from 'better-sqlite3';
import {
  type MessageRow,
  SEARCH_TEXT_FUNCTION,
  createSearchTable,
  fillSearchTable,
  searchTextOf,
} from './message-index-schema.js';
import { type Moved, SearchKeys, createSearchKeysTable, inBlockOf } from './message-search-keys.js';

/**
 * The columns the searchable text and its key are made of: a row write that changes none of them changes
 * nothing here.
 */
const SEARCHED_COLUMNS = [
  'type',
  'body',
  'media',
  'content',
  'revoked',
  'deleted',
  'at',
] as const satisfies ReadonlyArray<keyof MessageRow>;

const textOf = (row: MessageRow) => searchTextOf(row.type, row.body, row.media, row.content, row.revoked, row.deleted);

export class MessageSearchIndex {
  /** The batch's changes: a row's position → its text now ('' takes it out) and time (its key's block). */
  private readonly changes = new Map<number, { text: string; at: number; fresh: boolean }>();
  /** After reset(): filled once, from the finished table, when the rebuild has caught up. */
  private deferred = false;
  private statements: ReturnType<MessageSearchIndex['prepare']> | undefined;
  private readonly keys: SearchKeys;

  constructor(private readonly db: Database.Database) {
    this.keys = new SearchKeys(db);
  }

  setup(db: Database.Database): void {
    const { recreated } = createSearchTable(db);
    createSearchKeysTable(db);
    db.exec('CREATE TABLE IF NOT EXISTS chat_messages_search_state (filled INTEGER NOT NULL)');
    const state = db.prepare('SELECT filled FROM chat_messages_search_state').get() as { filled: number } | undefined;
    if (state?.filled === 1 && !recreated) return;
    // A rebuild that ended before its search index was filled (the process died), or a file from before this
    // state was kept: fill it now, where it is empty.
    db.transaction(() => {
      const empty = db.prepare('SELECT 1 FROM chat_messages_search LIMIT 1').get() === undefined;
      if (empty) fillSearchTable(db);
      this.markFilled(db, true);
    })();
  }

  /** Called in the rebuild's reset, after the message table was emptied. */
  reset(db: Database.Database): void {
    this.changes.clear();
    this.keys.forget();
    // FTS5's 'delete-all' drops the whole index at once; a DELETE takes each row's terms out one by one (333,000
    // messages: ~600 ms against ~4 ms, docs/notes/performance.md).
    db.exec(
      "INSERT INTO chat_messages_search (chat_messages_search) VALUES ('delete-all'); DELETE FROM chat_messages_search_keys",
    );
    this.markFilled(db, false);
    this.deferred = true;
  }

  caughtUp(): void {
    if (!this.deferred) return;
    this.deferred = false;
    this.keys.forget();
    this.db.transaction(() => {
      fillSearchTable(this.db);
      this.markFilled(this.db, true);
    })();
  }

  /** A message row written (`saved`: as it was stored, for an update): notes its text where it changed. */
  note(row: MessageRow, saved: MessageRow | undefined): void {
    if (this.deferred) return;
    // A status change or a reaction rewrites the row: its text (parsed from JSON for media) is not made again.
    if (saved && SEARCHED_COLUMNS.every((column) => row[column] === saved[column])) return;
    const text = textOf(row);
    // A row not stored before (`saved` undefined) has no key yet: flush() need not look one up.
    if (text !== (saved ? textOf(saved) : '') || (saved && row.at !== saved.at))
      this.changes.set(row.pos, { text, at: row.at, fresh: !saved });
  }

  /** Writes the batch's changes (after the message rows). */
  flush(): void {
    if (this.changes.size === 0) return;
    const sql = this.sql();
    this.keys.begin();
    for (const [pos, { text, at, fresh }] of this.changes) {
      const key = fresh ? undefined : this.keys.keyOf(pos);
      if (key !== undefined) sql.unsearch.run(key);
      if (key !== undefined && text !== '' && inBlockOf(key, at)) {
        sql.search.run(key, text);
        continue;
      }
      if (key !== undefined) this.keys.remove(pos);
      if (text === '') continue;
      const added = this.keys.add(pos, at);
      this.move(added.moved);
      sql.search.run(added.key, text);
    }
    this.changes.clear();
  }

  discard(): void {
    this.changes.clear();
    // Keys written by a batch that rolled back are gone again.
    this.keys.forget();
  }

  /** Texts whose keys changed (their block numbered again): all taken out first, as new keys may be old ones. */
  private move(moved: readonly Moved[]): void {
    const sql = this.sql();
    for (const { from } of moved) sql.unsearch.run(from);
    for (const { pos, to } of moved) sql.search.run(to, sql.textAt.get(pos) ?? '');
  }

  private markFilled(db: Database.Database, filled: boolean): void {
    db.exec('DELETE FROM chat_messages_search_state');
    db.prepare('INSERT INTO chat_messages_search_state (filled) VALUES (?)').run(filled ? 1 : 0);
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      search: this.db.prepare<[number, string]>('INSERT INTO chat_messages_search (rowid, text) VALUES (?, ?)'),
      unsearch: this.db.prepare<[number]>('DELETE FROM chat_messages_search WHERE rowid = ?'),
      // The rows are written before the search index: a moved message's text as it is now.
      textAt: this.db
        .prepare<[number], string>(
          `SELECT ${SEARCH_TEXT_FUNCTION}(type, body, media, content, revoked, deleted) FROM chat_messages WHERE pos = ?`,
        )
        .pluck(),
    };
  }
}
