/**
 * The search keys: the full-text index's rowids, made so that their order is the order search pages show,
 * newest first by (time, log position). A key is the message's time in whole seconds (the block) times 2^20,
 * plus its rank among the searchable messages of that second by log position. FTS5 walks a match's rowids in
 * order, so `ORDER BY rowid DESC LIMIT n` stops after n hits instead of reading and sorting every hit (a common
 * word matches half the messages). Table chat_messages_search_keys maps each key to its message's position, and
 * back (an edit writes its text again under the same key).
 *
 * Times outside 0..2^33-1 seconds (year 2242) are taken as its nearest end, and a fraction of a second is cut:
 * keys stay below 2^53, safe JavaScript numbers; such messages are ordered by position within their block.
 */
import type Database from 'better-sqlite3';

/** Bits of a key below its block: up to 2^20 searchable messages of one second. */
const RANK_BITS = 20;
const BLOCK_SIZE = 2 ** RANK_BITS;
const LAST_BLOCK = 2 ** 33 - 1;

/** The block of a message's time (`at`), as blockSql() makes it in SQL. */
export function searchBlockOf(at: number): number {
  const seconds = Math.trunc(at);
  if (!(seconds > 0)) return 0;
  return Math.min(seconds, LAST_BLOCK);
}

/** searchBlockOf in SQL, of a column (CAST cuts toward zero, and takes ±infinity to the integer range's ends). */
export const blockSql = (at: string) => `max(0, min(${LAST_BLOCK}, CAST(${at} AS INTEGER)))`;

/** The first key of a time's block, and the first key after it. */
export function searchBlockRange(at: number): { first: number; end: number } {
  const first = searchBlockOf(at) * BLOCK_SIZE;
  return { first, end: first + BLOCK_SIZE };
}

export function createSearchKeysTable(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS chat_messages_search_keys (key INTEGER PRIMARY KEY, pos INTEGER NOT NULL);
    CREATE UNIQUE INDEX IF NOT EXISTS chat_messages_search_keys_by_pos ON chat_messages_search_keys (pos);`);
}

/**
 * Gives every message with searchable text (`text`: the SQL of it, over chat_messages) its key, in one statement
 * (a rebuild's end).
 */
export function fillSearchKeys(db: Database.Database, text: string): void {
  // Emptied with the index; cleared here too, so that keys left without their texts never block a fill.
  db.exec('DELETE FROM chat_messages_search_keys');
  db.exec(`INSERT INTO chat_messages_search_keys (key, pos)
    SELECT block * ${BLOCK_SIZE} + row_number() OVER (PARTITION BY block ORDER BY pos) - 1, pos
    FROM (SELECT ${blockSql('at')} AS block, pos FROM chat_messages WHERE ${text} <> '')`);
}

/** A message whose key changed when its block was numbered again. */
export interface Moved {
  pos: number;
  from: number;
  to: number;
}

/** Whether `key` is in the block of time `at` (a message whose time changed needs a new key). */
export function inBlockOf(key: number, at: number): boolean {
  return Math.floor(key / BLOCK_SIZE) === searchBlockOf(at);
}

/** The keys of searchable messages, kept as their texts come and go (message-search-index.ts). */
export class SearchKeys {
  private statements: ReturnType<SearchKeys['prepare']> | undefined;
  /**
   * The highest key and its position, known without a query: a message recorded now goes after it, in its block
   * or a newer one. Undefined when not known (at start, after a removal, a rollback or another connection's commit).
   */
  private top: { key: number; pos: number } | null | undefined;
  /** PRAGMA data_version when `top` was last trusted: it changes when another connection commits. */
  private dataVersion = -1;

  constructor(private readonly db: Database.Database) {}

  /** Called before a batch's keys change: forgets the highest key if another connection wrote since. */
  begin(): void {
    const version = this.sql().dataVersion.get()!;
    if (version !== this.dataVersion) this.top = undefined;
    this.dataVersion = version;
  }

  /** Forgets what is known of the keys (a rollback, a rebuild's reset or fill). */
  forget(): void {
    this.top = undefined;
  }

  /** The message's key, or undefined when it has no searchable text. */
  keyOf(pos: number): number | undefined {
    return this.sql().keyOf.get(pos);
  }

  /**
   * A key for a message that has none, after those of its second with lower positions. A message recorded now has
   * the highest position yet, so it goes after its block's last key; one whose text came later (an edit gave words
   * to an empty caption) may belong before keys already given: its block is numbered again, and `moved` lists the
   * other messages whose key changed (their texts move with them).
   */
  add(pos: number, at: number): { key: number; moved: Moved[] } {
    const sql = this.sql();
    const { first, end } = searchBlockRange(at);
    const top = (this.top ??= sql.top.get() ?? null);
    // In the newest block or after it (a message recorded now): the highest key tells its block's last.
    if (top === null || top.key < first) return { key: this.insert(first, pos), moved: [] };
    if (top.key < end && top.pos < pos && top.key + 1 < end) return { key: this.insert(top.key + 1, pos), moved: [] };
    const last = sql.lastInBlock.get(first, end);
    if (last === undefined) return { key: this.insert(first, pos), moved: [] };
    if (last[1] < pos && last[0] + 1 < end) return { key: this.insert(last[0] + 1, pos), moved: [] };
    const block = sql.block.all(first, end);
    if (block.length >= BLOCK_SIZE) throw new RangeError(`more than ${BLOCK_SIZE} searchable messages in one second`);
    const positions = [...block.map(([, p]) => p), pos].sort((a, b) => a - b);
    const moved: Moved[] = [];
    sql.removeBlock.run(first, end);
    const keys = new Map(block.map(([k, p]) => [p, k]));
    this.top = undefined;
    positions.forEach((p, rank) => {
      const from = keys.get(p);
      if (from !== undefined && from !== first + rank) moved.push({ pos: p, from, to: first + rank });
      sql.insert.run(first + rank, p);
    });
    return { key: first + positions.indexOf(pos), moved };
  }

  remove(pos: number): void {
    this.top = undefined;
    this.sql().remove.run(pos);
  }

  /**
   * The bound of the page after the message at (`at`, `pos`): keys below it come after it in the order. The
   * message itself may be gone: those of its second with lower positions come after it.
   */
  boundAfter(at: number, pos: number): number {
    const { first, end } = searchBlockRange(at);
    const below = this.sql().lastBelow.get(first, end, pos);
    return below === undefined || below === null ? first : below + 1;
  }

  private insert(key: number, pos: number): number {
    this.sql().insert.run(key, pos);
    if (this.top !== undefined && (this.top === null || key > this.top.key)) this.top = { key, pos };
    return key;
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      top: db.prepare<[], { key: number; pos: number }>(
        'SELECT key, pos FROM chat_messages_search_keys ORDER BY key DESC LIMIT 1',
      ),
      keyOf: db.prepare<[number], number>('SELECT key FROM chat_messages_search_keys WHERE pos = ?').pluck(),
      lastInBlock: db
        .prepare<[number, number], [number, number]>(
          'SELECT key, pos FROM chat_messages_search_keys WHERE key >= ? AND key < ? ORDER BY key DESC LIMIT 1',
        )
        .raw(true),
      block: db
        .prepare<[number, number], [number, number]>(
          'SELECT key, pos FROM chat_messages_search_keys WHERE key >= ? AND key < ? ORDER BY key',
        )
        .raw(true),
      lastBelow: db
        .prepare<[number, number, number], number | null>(
          'SELECT max(key) FROM chat_messages_search_keys WHERE key >= ? AND key < ? AND pos < ?',
        )
        .pluck(),
      insert: db.prepare<[number, number]>('INSERT INTO chat_messages_search_keys (key, pos) VALUES (?, ?)'),
      remove: db.prepare<[number]>('DELETE FROM chat_messages_search_keys WHERE pos = ?'),
      removeBlock: db.prepare<[number, number]>('DELETE FROM chat_messages_search_keys WHERE key >= ? AND key < ?'),
    };
  }
}
