/**
 * The message index's full-text search part (table chat_messages_search, message-index-schema.ts): the changes of a
 * batch written at its end, and the whole index filled once from the finished message table after a rebuild (or
 * at start, when a rebuild ended before it was filled). Whether it is filled is kept in a table of its own: an
 * empty index is no sign, it is empty too when no message has text.
 */
import type Database from 'better-sqlite3';
import { BulkInsert } from '../projections/bulk-insert.js';
import { type MessageRow, createSearchTable, fillSearchTable, searchTextOf } from './message-index-schema.js';

/** The columns the searchable text is made of: a row write that changes none of them changes no text. */
const SEARCHED_COLUMNS = ['type', 'body', 'media', 'content', 'revoked', 'deleted'] as const satisfies ReadonlyArray<
  keyof MessageRow
>;

const textOf = (row: MessageRow) => searchTextOf(row.type, row.body, row.media, row.content, row.revoked, row.deleted);

export class MessageSearchIndex {
  /** The batch's changes of rows written before: a row's position → its text now ('' takes it out). */
  private readonly changes = new Map<number, string>();
  /** The batch's new rows with text: nothing to take out first, inserted several per statement. */
  private readonly added: BulkInsert;
  /** After reset(): filled once, from the finished table, when the rebuild has caught up. */
  private deferred = false;
  private statements: ReturnType<MessageSearchIndex['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {
    this.added = new BulkInsert(db, 'INSERT INTO chat_messages_search', ['rowid', 'text']);
  }

  setup(db: Database.Database): void {
    const { recreated } = createSearchTable(db);
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
    this.discard();
    db.exec('DELETE FROM chat_messages_search');
    this.markFilled(db, false);
    this.deferred = true;
  }

  caughtUp(): void {
    if (!this.deferred) return;
    this.deferred = false;
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
    // A new row is noted once per batch (its one write at the batch's end), and has no entry to take out yet.
    if (!saved) {
      if (text !== '') this.added.add(row.pos, text);
    } else if (text !== textOf(saved)) this.changes.set(row.pos, text);
  }

  /** Writes the batch's changes (after the message rows). */
  flush(): void {
    this.added.flush();
    if (this.changes.size === 0) return;
    const sql = this.sql();
    for (const [pos, text] of this.changes) {
      sql.unsearch.run(pos);
      if (text !== '') sql.search.run(pos, text);
    }
    this.changes.clear();
  }

  discard(): void {
    this.changes.clear();
    this.added.discard();
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
    };
  }
}
