/**
 * The webhooks read model's tables (src/webhooks/webhooks-read-model.ts): `webhook_targets` (every webhook, by scope)
 * and `webhook_deliveries` (one record per webhook and event), with the move from version 4's tables.
 */
import type Database from 'better-sqlite3';
import { GLOBAL_SCOPE } from './webhook-settings-events.js';

/** Makes the tables (version 4's, one hook per device and a delivery per event, go: the log rebuilds them). */
export function setupWebhookTables(db: Database.Database): void {
  // The tables of version 4 and before (one hook per device, a delivery per event): the log rebuilds them as
  // version 5's, the hook as the webhook `default` with its deliveries. Their URLs' bytes are overwritten, not just freed.
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('webhook_deliveries') as string[];
  if (columns.length > 0 && !columns.includes('webhook_id')) db.exec('DROP TABLE webhook_deliveries');
  const oldHooks = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('webhook_hooks') as string[];
  if (oldHooks.length > 0) secureDelete(db, () => db.exec('DELETE FROM webhook_hooks; DROP TABLE webhook_hooks'));
  db.exec(`
    CREATE TABLE IF NOT EXISTS webhook_targets (
      scope       TEXT NOT NULL, -- the device id, or '${GLOBAL_SCOPE}' for a global webhook
      webhook_id  TEXT NOT NULL, -- 'default': the device's hook
      url         TEXT NOT NULL,
      sealed_url  TEXT,
      events      TEXT NOT NULL,
      secret      TEXT NOT NULL,
      description TEXT,
      devices     TEXT,          -- global webhooks: the JSON array of the devices it takes; NULL: every device
      created_at  TEXT NOT NULL,
      updated_at  TEXT NOT NULL,
      PRIMARY KEY (scope, webhook_id)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS webhook_deliveries (
      webhook_id       TEXT NOT NULL,
      seq              INTEGER NOT NULL, -- log position of the event: per-device order, and the cursor
      id               TEXT NOT NULL,
      device_id        TEXT NOT NULL,
      event            TEXT NOT NULL,
      payload          TEXT NOT NULL,
      status           TEXT NOT NULL,
      attempts         INTEGER NOT NULL DEFAULT 0,
      round            INTEGER NOT NULL DEFAULT 0,
      round_attempts   INTEGER NOT NULL DEFAULT 0,
      final_round      INTEGER NOT NULL DEFAULT 0,
      last_status      INTEGER,
      last_error       TEXT,
      last_error_detail TEXT,
      last_attempt_at  TEXT,
      last_duration_ms INTEGER,
      next_attempt_at  INTEGER,
      created_at       TEXT NOT NULL,
      updated_at       INTEGER NOT NULL, -- ms; retention counts from here
      PRIMARY KEY (webhook_id, seq)
    );
    CREATE UNIQUE INDEX IF NOT EXISTS webhook_deliveries_by_id ON webhook_deliveries (webhook_id, id);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_by_lane ON webhook_deliveries (webhook_id, device_id, status, seq);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_by_lane_seq ON webhook_deliveries (webhook_id, device_id, seq);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_by_device ON webhook_deliveries (device_id, status);
    CREATE INDEX IF NOT EXISTS webhook_deliveries_finished ON webhook_deliveries (updated_at) WHERE status <> 'pending';
  `);
}

/** Empties both tables for a rebuild (the URLs' bytes overwritten). */
export function resetWebhookTables(db: Database.Database): void {
  secureDelete(db, () => db.exec('DELETE FROM webhook_targets'));
  db.exec('DELETE FROM webhook_deliveries');
}

/** Runs `work` with SQLite overwriting the bytes it frees (rows that held URLs with credentials in clear). */
export function secureDelete(db: Database.Database, work: () => void): void {
  const before = db.pragma('secure_delete', { simple: true }) as number;
  db.pragma('secure_delete = ON');
  try {
    work();
  } finally {
    db.pragma(`secure_delete = ${before}`);
  }
}
