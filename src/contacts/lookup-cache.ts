/**
 * Answers of number checks and avatar lookups, per device, until they expire. Kept in a table of the
 * read-model database, not in memory and not in the log: a restart does not ask WhatsApp again what it just
 * asked, and a lookup is a question, not a change (docs/api-guide.md, "Contacts"). Not a projection: a rebuild
 * leaves it alone, and deleting it only costs fresh lookups. Lookups run on the process that holds the
 * device's connection, whose cache answers them.
 */
import type Database from 'better-sqlite3';

export type LookupKind = 'check' | 'avatar' | 'about';

/** Expired rows are swept at most this often (they are never answered in between). */
const SWEEP_INTERVAL_MS = 10 * 60_000;

export class LookupCache {
  private readonly sql;
  private lastSweep = 0;

  constructor(
    db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS contact_lookups (
        device_id  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        number     TEXT NOT NULL,
        answer     TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (device_id, kind, number)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS contact_lookups_by_expiry ON contact_lookups (expires_at);
    `);
    this.sql = {
      get: db.prepare<[string, string, string, number], { answer: string }>(
        'SELECT answer FROM contact_lookups WHERE device_id = ? AND kind = ? AND number = ? AND expires_at > ?',
      ),
      put: db.prepare<[string, string, string, string, number]>(
        `INSERT INTO contact_lookups (device_id, kind, number, answer, expires_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (device_id, kind, number) DO UPDATE SET answer = excluded.answer, expires_at = excluded.expires_at`,
      ),
      sweep: db.prepare<[number]>('DELETE FROM contact_lookups WHERE expires_at <= ?'),
    };
  }

  /** The answer while it is fresh, else undefined. */
  get<T>(deviceId: string, kind: LookupKind, number: string): T | undefined {
    const row = this.sql.get.get(deviceId, kind, number, this.now());
    return row && (JSON.parse(row.answer) as T);
  }

  put(deviceId: string, kind: LookupKind, number: string, answer: unknown, ttlMs: number): void {
    const now = this.now();
    this.sql.put.run(deviceId, kind, number, JSON.stringify(answer), now + ttlMs);
    if (now - this.lastSweep >= SWEEP_INTERVAL_MS) {
      this.lastSweep = now;
      // Also how a deleted device's answers go: its routes answer 404 until then.
      this.sql.sweep.run(now);
    }
  }
}
