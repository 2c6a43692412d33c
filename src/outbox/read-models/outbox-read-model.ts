/**
 * The outbox read model: one row per message ever queued, with its latest status. It answers
 * GET /outbox (the pending ones, FIFO), finds a message by its waMessageId (DELETE /send, reactions,
 * receipts), and tells which devices have something waiting (the drainer at start).
 */
import { LimitedStatements } from '../../storage/limited-statements.js';
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../../eventstore/event-store.js';
import { eventGuard } from '../../eventstore/typed-events.js';
import type { MessageStatus } from '../../messages/message-events.js';
import type { Projection } from '../../projections/projection.js';
import { BulkInsert } from '../../projections/bulk-insert.js';
import { RowBuffer } from '../../projections/row-buffer.js';
import { nextStatus } from '../stream/message-status.js';
import { type OutboxError, type OutboxEvent, type SendKind } from '../stream/outbox-events.js';

/** A message's life in the outbox; revokes are the outbox's business only. */
const HANDLED: ReadonlySet<string> = new Set<OutboxEvent['type']>([
  'OutboxMessageQueued',
  'OutboxMessageSending',
  'OutboxAttemptFailed',
  'MessageStatusChanged',
]);
const isHandled = eventGuard<OutboxEvent>(HANDLED);

export interface OutboxItemView {
  outboxId: string;
  waMessageId: string;
  kind: SendKind;
  to: string;
  status: 'queued' | 'sending';
  attempts: number;
  createdAt: string;
  lastError?: OutboxError;
  expiresAt?: string;
}

export interface MessageRecord {
  outboxId: string;
  waMessageId: string;
  kind: SendKind;
  to: string;
  status: MessageStatus | 'sending';
}

interface Row {
  device_id: string;
  outbox_id: string;
  wa_message_id: string;
  seq: number;
  kind: SendKind;
  recipient: string;
  status: MessageStatus | 'sending';
  attempts: number;
  last_error: string | null;
  created_at: string;
  expires_at: string | null;
}

const keyOf = (deviceId: string, id: string) => `${deviceId}\u0000${id}`;
const INSERT_COLUMNS = [
  'device_id',
  'outbox_id',
  'wa_message_id',
  'seq',
  'kind',
  'recipient',
  'status',
  'attempts',
  'last_error',
  'created_at',
  'expires_at',
] as const satisfies ReadonlyArray<keyof Row>;

export class OutboxReadModel implements Projection {
  readonly name = 'outbox';
  // 2: expires_at.
  readonly version = 2;
  readonly handles: ReadonlySet<string> = HANDLED;
  /** apply() finds rows by their key (or by waMessageId, whose index stays). */
  readonly deferredIndexes = ['outbox_messages_pending', 'outbox_messages_unconfirmed', 'outbox_messages_expiring'];
  private statements: ReturnType<OutboxReadModel['prepare']> | undefined;
  /** Rows changed by the batch being applied (src/projections/row-buffer.ts). */
  private buffer: RowBuffer<Row> | undefined;
  /** waMessageId → outboxId of the rows the batch queued (a status without outboxId finds them here). */
  private readonly byWaId = new Map<string, string>();
  /** Rows new in the batch, inserted at its end. */
  private readonly inserts: BulkInsert;

  constructor(private readonly db: Database.Database) {
    this.inserts = new BulkInsert(db, 'INSERT OR IGNORE INTO outbox_messages', INSERT_COLUMNS, { keyColumns: 2 });
  }

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS outbox_messages (
        device_id     TEXT NOT NULL,
        outbox_id     TEXT NOT NULL,
        wa_message_id TEXT NOT NULL,
        seq           INTEGER NOT NULL,
        kind          TEXT NOT NULL,
        recipient     TEXT NOT NULL,
        status        TEXT NOT NULL,
        attempts      INTEGER NOT NULL DEFAULT 0,
        last_error    TEXT,
        created_at    TEXT NOT NULL,
        PRIMARY KEY (device_id, outbox_id)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS outbox_messages_by_wa_id ON outbox_messages (device_id, wa_message_id);
      CREATE INDEX IF NOT EXISTS outbox_messages_pending ON outbox_messages (device_id, seq) WHERE status IN ('queued', 'sending');
      CREATE INDEX IF NOT EXISTS outbox_messages_unconfirmed ON outbox_messages (device_id, seq) WHERE status IN ('sent', 'delivered');
    `);
    // A table made by version 1 lacks expires_at (version 2 rebuilds its rows, not its table).
    const columns = new Set(
      (db.prepare('PRAGMA table_info(outbox_messages)').all() as Array<{ name: string }>).map((column) => column.name),
    );
    if (!columns.has('expires_at')) db.exec('ALTER TABLE outbox_messages ADD COLUMN expires_at TEXT');
    db.exec(
      `CREATE INDEX IF NOT EXISTS outbox_messages_expiring ON outbox_messages (expires_at) WHERE status = 'queued' AND expires_at IS NOT NULL`,
    );
  }

  reset(db: Database.Database): void {
    this.discard();
    db.exec('DELETE FROM outbox_messages');
    this.rows().emptied();
  }

  caughtUp(): void {
    this.buffer?.caughtUp();
  }

  apply(stored: StoredEvent): void {
    if (!isHandled(stored)) return;
    const event = stored;
    const rows = this.rows();
    switch (event.type) {
      case 'OutboxMessageQueued': {
        const { deviceId, outboxId, waMessageId, seq, content, to, createdAt, expiresAt } = event.data;
        const key = keyOf(deviceId, outboxId);
        if (rows.get(key)) return;
        rows.put(key, {
          device_id: deviceId,
          outbox_id: outboxId,
          wa_message_id: waMessageId,
          seq,
          kind: content.kind,
          recipient: to,
          status: 'queued',
          attempts: 0,
          last_error: null,
          created_at: createdAt,
          expires_at: expiresAt ?? null,
        });
        this.byWaId.set(keyOf(deviceId, waMessageId), outboxId);
        return;
      }
      case 'OutboxMessageSending': {
        const key = keyOf(event.data.deviceId, event.data.outboxId);
        const row = rows.get(key);
        if (!row || (row.status !== 'queued' && row.status !== 'sending')) return;
        row.status = 'sending';
        row.attempts = event.data.attempt;
        rows.put(key, row);
        return;
      }
      case 'OutboxAttemptFailed': {
        const key = keyOf(event.data.deviceId, event.data.outboxId);
        const row = rows.get(key);
        if (!row || (row.status !== 'queued' && row.status !== 'sending')) return;
        row.status = 'queued';
        row.last_error = JSON.stringify(event.data.error);
        rows.put(key, row);
        return;
      }
      case 'MessageStatusChanged': {
        const { deviceId, waMessageId, status, error } = event.data;
        const outboxId =
          event.data.outboxId ??
          this.byWaId.get(keyOf(deviceId, waMessageId)) ??
          this.sql().statusByWaId.get(deviceId, waMessageId)?.outbox_id;
        if (outboxId === undefined) return; // a message this outbox did not send (e.g. from the phone)
        const key = keyOf(deviceId, outboxId);
        const row = rows.get(key);
        if (!row) return;
        const next = nextStatus(row.status, status);
        if (next === row.status && !error) return;
        row.status = next as Row['status'];
        if (error) row.last_error = JSON.stringify(error);
        rows.put(key, row);
        return;
      }
    }
  }

  flush(): void {
    this.buffer?.flush();
    this.inserts.flush();
    this.byWaId.clear();
  }

  discard(): void {
    this.buffer?.discard();
    this.inserts.discard();
    this.byWaId.clear();
  }

  private rows(): RowBuffer<Row> {
    if (this.buffer) return this.buffer;
    const sql = this.sql();
    this.buffer = new RowBuffer<Row>(
      (key) => sql.byId.get(...(key.split('\u0000') as [string, string])),
      (row, stored) =>
        stored
          ? sql.update.run(row.status, row.attempts, row.last_error, row.device_id, row.outbox_id)
          : this.inserts.addObject(row),
      // A message's next status finds its row in memory (src/projections/row-buffer.ts).
      5_000,
    );
    return this.buffer;
  }

  /** Pending messages (queued or being sent), oldest first, after the given FIFO position. */
  pending(
    deviceId: string,
    options: { limit: number; afterSeq?: number },
  ): { items: OutboxItemView[]; nextAfterSeq: number | null } {
    const rows = this.sql()
      .pendingPage.limit(options.limit + 1)
      .all(deviceId, options.afterSeq ?? 0);
    const page = rows.slice(0, options.limit);
    return {
      items: page.map(toItemView),
      nextAfterSeq: rows.length > options.limit ? page[page.length - 1].seq : null,
    };
  }

  /**
   * Sent messages not yet read (`sent` or `delivered`), oldest first, a page after the given FIFO position:
   * the receipts the network still owes them (the sandbox engine asks when a device comes online).
   */
  unconfirmed(
    deviceId: string,
    options: { limit: number; afterSeq?: number },
  ): { items: Array<{ waMessageId: string; to: string; status: 'sent' | 'delivered' }>; nextAfterSeq: number | null } {
    const rows = this.sql()
      .unconfirmedPage.limit(options.limit + 1)
      .all(deviceId, options.afterSeq ?? 0);
    const page = rows.slice(0, options.limit);
    return {
      items: page.map((row) => ({ waMessageId: row.wa_message_id, to: row.recipient, status: row.status })),
      nextAfterSeq: rows.length > options.limit ? page[page.length - 1].seq : null,
    };
  }

  byWaMessageId(deviceId: string, waMessageId: string): MessageRecord | undefined {
    const row = this.sql().recordByWaId.get(deviceId, waMessageId);
    return (
      row && {
        outboxId: row.outbox_id,
        waMessageId: row.wa_message_id,
        kind: row.kind,
        to: row.recipient,
        status: row.status,
      }
    );
  }

  isPending(deviceId: string, outboxId: string): boolean {
    const row = this.sql().byId.get(deviceId, outboxId);
    return row !== undefined && (row.status === 'queued' || row.status === 'sending');
  }

  /** Messages waiting or being sent, per status, over all devices (the outbox depth gauge). */
  depth(): Array<{ status: string; count: number }> {
    return this.sql().depth.all();
  }

  /** Messages waiting or being sent, per device (the dashboard's overview). */
  depthByDevice(): Map<string, number> {
    return new Map(
      this.sql()
        .depthByDevice.all()
        .map((row) => [row.device_id, row.count]),
    );
  }

  devicesWithPending(): string[] {
    return this.sql()
      .pendingDevices.all()
      .map((r) => r.device_id);
  }

  /** Devices with a queued message whose expiresAt is at or before `now` (the expiry sweep). */
  devicesWithExpired(now: number): string[] {
    return this.sql()
      .expiredDevices.all(new Date(now).toISOString())
      .map((r) => r.device_id);
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      update: db.prepare(
        'UPDATE outbox_messages SET status = ?, attempts = ?, last_error = ? WHERE device_id = ? AND outbox_id = ?',
      ),
      byId: db.prepare<[string, string], Row>('SELECT * FROM outbox_messages WHERE device_id = ? AND outbox_id = ?'),
      statusById: db.prepare<[string, string], Pick<Row, 'outbox_id' | 'status'>>(
        'SELECT outbox_id, status FROM outbox_messages WHERE device_id = ? AND outbox_id = ?',
      ),
      statusByWaId: db.prepare<[string, string], Pick<Row, 'outbox_id' | 'status'>>(
        'SELECT outbox_id, status FROM outbox_messages WHERE device_id = ? AND wa_message_id = ? LIMIT 1',
      ),
      recordByWaId: db.prepare<
        [string, string],
        Pick<Row, 'outbox_id' | 'wa_message_id' | 'kind' | 'recipient' | 'status'>
      >(
        'SELECT outbox_id, wa_message_id, kind, recipient, status FROM outbox_messages WHERE device_id = ? AND wa_message_id = ? LIMIT 1',
      ),
      // Their LIMIT in the text: a bound one is planned again at every run (src/storage/limited-statements.ts).
      pendingPage: new LimitedStatements<[string, number], Row>(
        db,
        `SELECT * FROM outbox_messages WHERE device_id = ? AND status IN ('queued', 'sending') AND seq > ? ORDER BY seq`,
      ),
      unconfirmedPage: new LimitedStatements<
        [string, number],
        { wa_message_id: string; recipient: string; status: 'sent' | 'delivered'; seq: number }
      >(
        db,
        `SELECT wa_message_id, recipient, status, seq FROM outbox_messages
         WHERE device_id = ? AND status IN ('sent', 'delivered') AND seq > ? ORDER BY seq`,
      ),
      depth: db.prepare<[], { status: string; count: number }>(
        `SELECT status, count(*) AS count FROM outbox_messages WHERE status IN ('queued', 'sending') GROUP BY status`,
      ),
      depthByDevice: db.prepare<[], { device_id: string; count: number }>(
        `SELECT device_id, count(*) AS count FROM outbox_messages WHERE status IN ('queued', 'sending') GROUP BY device_id`,
      ),
      pendingDevices: db.prepare<[], { device_id: string }>(
        `SELECT DISTINCT device_id FROM outbox_messages WHERE status IN ('queued', 'sending')`,
      ),
      expiredDevices: db.prepare<[string], { device_id: string }>(
        `SELECT DISTINCT device_id FROM outbox_messages WHERE status = 'queued' AND expires_at IS NOT NULL AND expires_at <= ?`,
      ),
    };
  }
}

function toItemView(row: Row): OutboxItemView {
  return {
    outboxId: row.outbox_id,
    waMessageId: row.wa_message_id,
    kind: row.kind,
    to: row.recipient,
    status: row.status === 'sending' ? 'sending' : 'queued',
    attempts: row.attempts,
    createdAt: row.created_at,
    ...(row.last_error ? { lastError: JSON.parse(row.last_error) as OutboxError } : {}),
    ...(row.expires_at ? { expiresAt: row.expires_at } : {}),
  };
}
