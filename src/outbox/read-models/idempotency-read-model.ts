/**
 * Idempotency keys of sends, kept as a read model of the OutboxMessageQueued events that carried one:
 * the key, a digest of the request and the answer it got. It survives restarts (and is rebuilt from the
 * log like any read model), so a client that retries after a crash still gets its first answer.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../../eventstore/event-store.js';
import type { Projection } from '../../projections/projection.js';
import { type OutboxMessageQueuedData, type QueuedAnswer, answerOf } from '../stream/outbox-events.js';

export interface IdempotencyRecord {
  fingerprint: string;
  answer: QueuedAnswer;
  /** Epoch ms of the first request. */
  createdAt: number;
}

export class IdempotencyReadModel implements Projection {
  readonly name = 'idempotency-keys';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = new Set(['OutboxMessageQueued']);
  private statements: ReturnType<IdempotencyReadModel['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS idempotency_keys (
        device_id   TEXT NOT NULL,
        key         TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        answer      TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        PRIMARY KEY (device_id, key)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys (created_at);
    `);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM idempotency_keys');
  }

  apply(stored: StoredEvent): void {
    const data = stored.data as OutboxMessageQueuedData;
    if (!data.idempotency) return;
    // A key used again after it expired belongs to the newer request.
    this.sql().upsert.run(
      data.deviceId,
      data.idempotency.key,
      data.idempotency.fingerprint,
      JSON.stringify(answerOf(data)),
      stored.createdAt.getTime(),
    );
  }

  /** The record of a key, if it was used since `notBefore` (epoch ms). */
  find(deviceId: string, key: string, notBefore: number): IdempotencyRecord | undefined {
    const row = this.sql().find.get(deviceId, key, notBefore);
    return (
      row && { fingerprint: row.fingerprint, answer: JSON.parse(row.answer) as QueuedAnswer, createdAt: row.created_at }
    );
  }

  /** Forgets keys older than `before` (epoch ms); answers how many. */
  prune(before: number): number {
    return this.sql().prune.run(before).changes;
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      upsert: db.prepare(
        `INSERT INTO idempotency_keys (device_id, key, fingerprint, answer, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(device_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, answer = excluded.answer, created_at = excluded.created_at
         WHERE excluded.created_at >= idempotency_keys.created_at`,
      ),
      find: db.prepare<[string, string, number], { fingerprint: string; answer: string; created_at: number }>(
        'SELECT fingerprint, answer, created_at FROM idempotency_keys WHERE device_id = ? AND key = ? AND created_at >= ?',
      ),
      prune: db.prepare('DELETE FROM idempotency_keys WHERE created_at < ?'),
    };
  }
}
