/**
 * Statements whose `LIMIT` is written into their text, one prepared per limit asked for. SQLite (3.47 on) reads a
 * bound `LIMIT ?` while planning the query, and so expires the statement at every bind of it: each run parsed and
 * planned the whole statement again (issue 37 found a fifth of a chat page's CPU there). Limits come from request
 * schemas (at most a few hundred values), so the statements stay few.
 */
import type Database from 'better-sqlite3';

export class LimitedStatements<P extends unknown[], R> {
  private readonly statements = new Map<number, Database.Statement<P, R>>();

  /** `sql` ends where `LIMIT n` goes; `raw` (true): rows as arrays; 'pluck': each row its first value. */
  constructor(
    private readonly db: Database.Database,
    private readonly sql: string,
    private readonly raw: boolean | 'pluck' = false,
  ) {}

  /** The statement for this limit (a whole number, 0 or more). */
  limit(limit: number): Database.Statement<P, R> {
    let statement = this.statements.get(limit);
    if (!statement) {
      if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`not a limit: ${limit}`);
      statement = this.db.prepare<P, R>(`${this.sql} LIMIT ${limit}`);
      if (this.raw === 'pluck') statement.pluck(true);
      else if (this.raw) statement.raw(true);
      this.statements.set(limit, statement);
    }
    return statement;
  }
}
