/**
 * A read of the log whose `LIMIT` is written into the statement's text: a bound `LIMIT ?` makes SQLite plan the
 * statement again at every run (src/storage/limited-statements.ts), about 10 µs per read of the log's tail or of a
 * stream, which every process makes hundreds of times a second. "No limit" is a statement without one; limits are
 * the callers' page sizes, and past MAX_LIMITS of them the bound statement serves the rest.
 */
import type Database from 'better-sqlite3';
import { LimitedStatements } from '../../storage/limited-statements.js';
import type { RawEventRow } from './event-rows.js';

const MAX_LIMITS = 64;

export class LimitedRead<P extends unknown[]> {
  private readonly byLimit: LimitedStatements<P, RawEventRow>;
  private readonly unlimited: Database.Statement<P, RawEventRow>;
  private readonly bound: Database.Statement<[...P, number], RawEventRow>;
  /** The limits given a statement of their own. */
  private readonly known = new Set<number>();

  /** `sql` ends where `LIMIT n` goes. */
  constructor(db: Database.Database, sql: string) {
    this.byLimit = new LimitedStatements<P, RawEventRow>(db, sql, true);
    this.unlimited = db.prepare<P, RawEventRow>(sql).raw(true);
    this.bound = db.prepare<[...P, number], RawEventRow>(`${sql} LIMIT ?`).raw(true);
  }

  all(limit: number, ...params: P): RawEventRow[] {
    if (limit >= Number.MAX_SAFE_INTEGER) return this.unlimited.all(...params);
    if (Number.isSafeInteger(limit) && limit >= 0 && (this.known.has(limit) || this.known.size < MAX_LIMITS)) {
      this.known.add(limit);
      return this.byLimit.limit(limit).all(...params);
    }
    return this.bound.all(...params, limit);
  }
}
