/**
 * The state of the read models' file as one connection sees it, as a short string for entity tags (conditional
 * GETs, src/http/conditional.ts): it changes with every commit to the file, another process's (`data_version`) or
 * this connection's own (`total_changes()`), so an answer tagged with it cannot outlive a write. Both numbers start
 * again when a connection opens: the epoch, drawn at random, tells them from an earlier process's.
 */
import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';

export class ReadModelVersion {
  private readonly epoch = randomBytes(6).toString('base64url');
  private statements: { data: Database.Statement<[], number>; changes: Database.Statement<[], number> } | undefined;

  constructor(private readonly db: Database.Database) {}

  /**
   * The version now; undefined while this connection holds a transaction open across turns of the event loop (a
   * rebuild pass): rows read then may still be rolled back, and must not be tagged.
   */
  current(): string | undefined {
    if (this.db.inTransaction) return undefined;
    // Two statements: the pragma as a table (one SELECT of both) cost half as much again.
    const sql = (this.statements ??= {
      data: this.db.prepare<[], number>('PRAGMA data_version').pluck(true),
      changes: this.db.prepare<[], number>('SELECT total_changes()').pluck(true),
    });
    return `${this.epoch}.${sql.data.get()}.${sql.changes.get()}`;
  }
}
