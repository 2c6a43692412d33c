/**
 * The webhooks read model's delivery records (`webhook_deliveries`, src/webhooks/webhooks-schema.ts): one per
 * webhook and event it asked for, with its progress; the dispatcher's queue (pending heads, lanes with work) and
 * the log behind the deliveries routes. Written by WebhooksReadModel.apply only.
 */
import { LimitedStatements } from '../storage/limited-statements.js';
import type Database from 'better-sqlite3';
import type { WebhookEventKind } from './envelope.js';
import { DEFAULT_WEBHOOK_ID } from './webhook-settings-events.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A delivery as the log shows it. */
export interface DeliveryView {
  id: string;
  /** Only in the log of a global webhook: the device the event belongs to. */
  deviceId?: string;
  event: WebhookEventKind;
  status: DeliveryStatus;
  attempts: number;
  lastStatus?: number;
  /** `unreachable` when no answer came; what happened then is in `lastErrorDetail`. */
  lastError?: string;
  /** Why the receiver could not be reached (host not found, refused…): for the admin only. */
  lastErrorDetail?: string;
  lastAttemptAt?: string;
  lastDurationMs?: number;
  nextAttemptAt?: string;
  createdAt: string;
}

/** What the dispatcher needs to make the next attempt of a pending delivery. */
export interface PendingDelivery {
  /** Log position of the event it delivers: the device's order. */
  seq: number;
  id: string;
  deviceId: string;
  /** The lane's webhook. */
  webhookId: string;
  /** The envelope exactly as sent, every attempt. */
  payload: string;
  attempts: number;
  round: number;
  roundAttempts: number;
  /** A retry requested for a finished delivery gets exactly one attempt. */
  finalRound: boolean;
  nextAttemptAt: number;
}

export interface DeliveryPageOptions {
  status?: DeliveryStatus;
  limit: number;
  before?: number;
  detail?: boolean;
}

/** A lane: one webhook's deliveries of one device, in the device's order. */
export interface LaneId {
  deviceId: string;
  webhookId: string;
}

/** What waits to be delivered for a device, over its webhooks: how far its receivers are behind. */
export interface WebhookBacklog {
  pending: number;
  /** When the event of the oldest pending delivery happened. */
  oldestPendingAt: string;
}

interface DeliveryRow {
  webhook_id: string;
  seq: number;
  id: string;
  device_id: string;
  event: WebhookEventKind;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  round: number;
  round_attempts: number;
  final_round: number;
  last_status: number | null;
  last_error: string | null;
  last_error_detail: string | null;
  last_attempt_at: string | null;
  last_duration_ms: number | null;
  next_attempt_at: number | null;
  created_at: string;
}

const laneOf = (lane: LaneId | string): LaneId =>
  typeof lane === 'string' ? { deviceId: lane, webhookId: DEFAULT_WEBHOOK_ID } : lane;

/** A delivery's fields for the record made when its event is applied. */
export interface NewDelivery {
  webhookId: string;
  seq: number;
  id: string;
  deviceId: string;
  /** The envelope's kind. */
  event: string;
  payload: string;
  nextAttemptAt: number;
  createdAt: string;
  at: number;
}

export class DeliveryRecords {
  private statements: ReturnType<DeliveryRecords['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  /** A delivery of an event to a webhook (none when one is recorded already: a batch applied again). */
  insert(d: NewDelivery): void {
    this.sql().insertDelivery.run(
      d.webhookId,
      d.seq,
      d.id,
      d.deviceId,
      d.event,
      d.payload,
      d.nextAttemptAt,
      d.createdAt,
      d.at,
    );
  }

  /**
   * A lane's (or, `deviceId` null, a global webhook's) pending deliveries end as failed: all of them, or those of
   * the kinds not `listed` (a JSON array), or those of the devices not in `devices` (a JSON array).
   */
  cancel(args: {
    reason: string;
    at: number;
    webhookId: string;
    deviceId: string | null;
    listed: string | null;
    devices: string | null;
  }): void {
    this.sql().cancelPending.run(args);
  }

  /** Every pending delivery of a deleted device ends as failed. */
  cancelDevice(deviceId: string, at: number, reason: string): void {
    this.sql().cancelDevice.run({ reason, at, deviceId });
  }

  /** An attempt (positional parameters: one of these per attempt, and better-sqlite3 binds them faster). */
  recordAttempt(...args: Parameters<ReturnType<DeliveryRecords['prepare']>['recordAttempt']['run']>): void {
    this.sql().recordAttempt.run(...args);
  }

  /** A retry of a delivery of the webhook's kinds (`all`: it takes every kind); whether one was changed. */
  requestRetry(args: {
    webhookId: string;
    deviceId: string;
    id: string;
    at: number;
    all: 0 | 1;
    events: string;
  }): boolean {
    return this.sql().requestRetry.run(args).changes > 0;
  }

  /** The lane's (a device id: its hook's) `count` oldest pending deliveries, oldest first. */
  pendingHeads(lane: LaneId | string, count: number): PendingDelivery[] {
    const { deviceId, webhookId } = laneOf(lane);
    return this.sql().heads.limit(count).all(webhookId, deviceId).map(toPending);
  }

  /** The lane's `count` oldest pending deliveries after `seq`, oldest first (the dispatcher's read-ahead). */
  pendingAfter(lane: LaneId | string, seq: number, count: number): PendingDelivery[] {
    const { deviceId, webhookId } = laneOf(lane);
    return this.sql().headsAfter.limit(count).all(webhookId, deviceId, seq).map(toPending);
  }

  /** The devices with something pending, for any webhook. */
  devicesWithPending(): string[] {
    return [...new Set(this.lanesWithPending().map((lane) => lane.deviceId))];
  }

  lanesWithPending(): LaneId[] {
    return this.sql()
      .pendingLanes.all()
      .map((row) => ({ deviceId: row.device_id, webhookId: row.webhook_id }));
  }

  /** Per device with something pending: how many deliveries wait, over its webhooks, and since when the oldest. */
  backlogByDevice(): Map<string, WebhookBacklog> {
    return new Map(
      this.sql()
        .backlog.all()
        .map((row) => [row.device_id, { pending: row.pending, oldestPendingAt: row.oldest }]),
    );
  }

  /** The webhooks with something pending for the device. */
  webhooksWithPending(deviceId: string): string[] {
    return this.sql()
      .pendingWebhooksOf.all(deviceId)
      .map((row) => row.webhook_id);
  }

  /**
   * A webhook's delivery; `deviceId` undefined: of any device (a global webhook's log, which shows each record's
   * device). `detail`: with why an unreachable receiver was (the admin's view).
   */
  webhookDelivery(
    webhookId: string,
    deviceId: string | undefined,
    id: string,
    detail = false,
  ): DeliveryView | undefined {
    const row = this.sql().byId.get(webhookId, id);
    if (!row || (deviceId !== undefined && row.device_id !== deviceId)) return undefined;
    return toView(row, detail, deviceId === undefined);
  }

  /** A delivery of the device's hook (the webhook `default`). */
  delivery(deviceId: string, id: string, detail = false): DeliveryView | undefined {
    return this.webhookDelivery(DEFAULT_WEBHOOK_ID, deviceId, id, detail);
  }

  /** The log of the device's hook (the webhook `default`), newest first. */
  list(deviceId: string, options: DeliveryPageOptions): { items: DeliveryView[]; nextBefore: number | null } {
    return this.webhookDeliveries(DEFAULT_WEBHOOK_ID, deviceId, options);
  }

  /** Newest first; `before` is the seq the previous page ended at. `deviceId` undefined: every device's (global). */
  webhookDeliveries(
    webhookId: string,
    deviceId: string | undefined,
    options: DeliveryPageOptions,
  ): { items: DeliveryView[]; nextBefore: number | null } {
    const sql = this.sql();
    const before = options.before ?? Number.MAX_SAFE_INTEGER;
    const limit = options.limit + 1;
    const rows =
      deviceId === undefined
        ? options.status
          ? sql.globalPageInStatus.all(webhookId, options.status, before, limit)
          : sql.globalPage.all(webhookId, before, limit)
        : options.status
          ? sql.pageInStatus.all(webhookId, deviceId, options.status, before, limit)
          : sql.page.all(webhookId, deviceId, before, limit);
    const page = rows.slice(0, options.limit);
    return {
      items: page.map((row) => toView(row, options.detail === true, deviceId === undefined)),
      nextBefore: rows.length > options.limit ? page[page.length - 1].seq : null,
    };
  }

  /** Drops finished deliveries last changed before `before` (ms). Housekeeping outside the log: a rebuild prunes again. */
  prune(before: number): number {
    return this.sql().prune.run(before).changes;
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      // A webhook's pending deliveries (of a device, or of every device) end as failed: all of them, or (`listed`,
      // the JSON array of the kinds it lists) those of the other kinds, or (`devices`) those of other devices. A new
      // round: an attempt still in flight, recorded later, counts but decides nothing (it would make the delivery
      // pending again, for whatever webhook comes next).
      cancelPending: db.prepare<
        [
          {
            reason: string;
            at: number;
            webhookId: string;
            deviceId: string | null;
            listed: string | null;
            devices: string | null;
          },
        ]
      >(
        `UPDATE webhook_deliveries SET status = 'failed', last_error = @reason, last_error_detail = NULL, next_attempt_at = NULL, updated_at = @at, round = round + 1
         WHERE webhook_id = @webhookId AND (@deviceId IS NULL OR device_id = @deviceId) AND status = 'pending'
           AND (@listed IS NULL OR event NOT IN (SELECT value FROM json_each(@listed)))
           AND (@devices IS NULL OR device_id NOT IN (SELECT value FROM json_each(@devices)))`,
      ),
      cancelDevice: db.prepare<[{ reason: string; at: number; deviceId: string }]>(
        `UPDATE webhook_deliveries SET status = 'failed', last_error = @reason, last_error_detail = NULL, next_attempt_at = NULL, updated_at = @at, round = round + 1
         WHERE device_id = @deviceId AND status = 'pending'`,
      ),
      insertDelivery: db.prepare(
        `INSERT OR IGNORE INTO webhook_deliveries (webhook_id, seq, id, device_id, event, payload, status, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
      ),
      recordAttempt: db.prepare<
        [
          number | null,
          string | null,
          string | null,
          string,
          number,
          number,
          string,
          number,
          number | null,
          number,
          number,
          string,
          string,
        ]
      >(
        `UPDATE webhook_deliveries SET
           attempts = attempts + 1,
           last_status = ?, last_error = ?, last_error_detail = ?, last_attempt_at = ?, last_duration_ms = ?,
           status          = CASE WHEN round = ? THEN ? ELSE status END,
           next_attempt_at = CASE WHEN round = ? THEN ? ELSE next_attempt_at END,
           round_attempts  = CASE WHEN round = ? THEN round_attempts + 1 ELSE round_attempts END,
           updated_at = ?
         WHERE webhook_id = ? AND id = ?`,
      ),
      // Pending: it goes now, on its remaining schedule. Finished: it goes once more, now.
      requestRetry: db.prepare(
        `UPDATE webhook_deliveries SET
           round = round + 1,
           round_attempts = CASE WHEN status = 'pending' THEN round_attempts ELSE 0 END,
           final_round    = CASE WHEN status = 'pending' THEN final_round ELSE 1 END,
           status = 'pending', next_attempt_at = @at, updated_at = @at
         WHERE webhook_id = @webhookId AND id = @id AND device_id = @deviceId
           AND (@all = 1 OR event IN (SELECT value FROM json_each(@events)))`,
      ),
      // Their LIMIT in the text: a bound one is planned again at every run (src/storage/limited-statements.ts).
      heads: new LimitedStatements<[string, string], DeliveryRow>(
        db,
        "SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND device_id = ? AND status = 'pending' ORDER BY seq",
      ),
      headsAfter: new LimitedStatements<[string, string, number], DeliveryRow>(
        db,
        "SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND device_id = ? AND status = 'pending' AND seq > ? ORDER BY seq",
      ),
      pendingLanes: db.prepare<[], { webhook_id: string; device_id: string }>(
        "SELECT DISTINCT webhook_id, device_id FROM webhook_deliveries WHERE status = 'pending'",
      ),
      backlog: db.prepare<[], { device_id: string; pending: number; oldest: string }>(
        "SELECT device_id, COUNT(*) AS pending, MIN(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending' GROUP BY device_id",
      ),
      pendingWebhooksOf: db.prepare<[string], { webhook_id: string }>(
        "SELECT DISTINCT webhook_id FROM webhook_deliveries WHERE device_id = ? AND status = 'pending'",
      ),
      byId: db.prepare<[string, string], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND id = ?',
      ),
      page: db.prepare<[string, string, number, number], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND device_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
      ),
      pageInStatus: db.prepare<[string, string, DeliveryStatus, number, number], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND device_id = ? AND status = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
      ),
      globalPage: db.prepare<[string, number, number], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
      ),
      globalPageInStatus: db.prepare<[string, DeliveryStatus, number, number], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND status = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
      ),
      prune: db.prepare<[number]>("DELETE FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < ?"),
    };
  }
}

function toPending(row: DeliveryRow): PendingDelivery {
  return {
    seq: row.seq,
    id: row.id,
    deviceId: row.device_id,
    webhookId: row.webhook_id,
    payload: row.payload,
    attempts: row.attempts,
    round: row.round,
    roundAttempts: row.round_attempts,
    finalRound: row.final_round === 1,
    nextAttemptAt: row.next_attempt_at ?? 0,
  };
}

function toView(row: DeliveryRow, detail: boolean, withDevice: boolean): DeliveryView {
  return {
    id: row.id,
    ...(withDevice ? { deviceId: row.device_id } : {}),
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    ...(row.last_status === null ? {} : { lastStatus: row.last_status }),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    ...(detail && row.last_error_detail !== null ? { lastErrorDetail: row.last_error_detail } : {}),
    ...(row.last_attempt_at === null ? {} : { lastAttemptAt: row.last_attempt_at }),
    ...(row.last_duration_ms === null ? {} : { lastDurationMs: row.last_duration_ms }),
    ...(row.status === 'pending' && row.next_attempt_at !== null
      ? { nextAttemptAt: new Date(row.next_attempt_at).toISOString() }
      : {}),
    createdAt: row.created_at,
  };
}
