import type Database from 'better-sqlite3';
import {
  DEVICE_EVENT_TYPES,
  type DeviceEvent,
  HOOK_EVENT_TYPES,
  type HookConfiguration,
  type HookEvent,
} from '../devices/device-events.js';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { HookSecrets } from './hook-secrets.js';
import { UNREACHABLE } from './webhook-sender.js';
import type { Projection } from '../projections/projection.js';
import { DELIVERY_EVENT_TYPES, type DeliveryEvent } from './delivery-events.js';
import {
  ALL_EVENTS,
  type HookEventName,
  WEBHOOK_SOURCE_EVENT_TYPES,
  type WebhookEventKind,
  envelopeOf,
  hookWants,
} from './envelope.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const isOwnEvent = eventGuard<HookEvent | DeliveryEvent | DeviceEvent>(
  new Set([...HOOK_EVENT_TYPES, ...DELIVERY_EVENT_TYPES, ...DEVICE_EVENT_TYPES]),
);

export interface HookView extends Omit<HookConfiguration<HookEventName>, 'sealedUrl'> {
  updatedAt: string;
}

/** The configuration as the table keeps it: `url` masked when `sealedUrl` is set, the secret sealed with a key. */
interface StoredHook extends HookConfiguration<HookEventName> {
  updatedAt: string;
}

/** A delivery as the log shows it. */
export interface DeliveryView {
  id: string;
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
  /** The envelope exactly as sent, every attempt. */
  payload: string;
  attempts: number;
  round: number;
  roundAttempts: number;
  /** A retry requested for a finished delivery gets exactly one attempt. */
  finalRound: boolean;
  nextAttemptAt: number;
}

interface DeliveryRow {
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

interface HookRow {
  url: string;
  sealed_url: string | null;
  events: string;
  secret: string;
  updated_at: string;
}

const HANDLED = new Set([...WEBHOOK_SOURCE_EVENT_TYPES, ...HOOK_EVENT_TYPES, ...DELIVERY_EVENT_TYPES, 'DeviceDeleted']);

/**
 * The webhooks read model: each device's hook configuration, and one delivery per domain event that a
 * hook asked for (created when the event is applied, so only events after the hook was configured and
 * only of the kinds it lists), with its progress folded from the delivery events. It is the queue the
 * dispatcher works from after a restart and the log behind GET /hooks/deliveries; rebuilt from the log,
 * it is the same. `onWork` is told which device has something new to deliver (after the batch commits).
 */
export class WebhooksReadModel implements Projection {
  readonly name = 'webhooks';
  /**
   * 2: removing the hooks cancels their pending deliveries for good (a delivery in flight recorded later went pending again, for the next hook).
   * 3: a kind dropped from `events` cancels its pending deliveries; a retry requested after the hook was removed (or its
   * kind dropped) changes nothing (it went pending again, and out to whatever hook came next).
   * 4: a URL with credentials is kept masked, the URL itself sealed, when ENCRYPTION_KEY is set (also one recorded in
   * clear before); an attempt that got no answer keeps `unreachable` as its error and the reason apart, for the admin.
   */
  readonly version = 4;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<WebhooksReadModel['prepare']> | undefined;
  /** `rewound`: a delivery older than those already pending became pending again (a retry was requested). */
  onWork: (deviceId: string, rewound: boolean) => void = () => undefined;
  private readonly woken = new Map<string, boolean>();
  /**
   * Hook configurations by device (null: none), read on every event and every attempt. apply() drops a
   * device's entry before it changes the row, so a cached value is never older than the table.
   */
  private readonly hooks = new Map<string, StoredHook | null>();
  /** The same with their secrets and URLs opened (hook(), on every attempt); dropped with `hooks`' entries. Shared: never changed. */
  private readonly openedHooks = new Map<string, HookView>();

  /**
   * `secrets` opens the stored secrets and URLs (sealed when ENCRYPTION_KEY is set), and seals a URL with
   * credentials that an event recorded in clear (before the key was set, or before URLs were sealed).
   */
  constructor(
    private readonly db: Database.Database,
    private readonly secrets: HookSecrets = new HookSecrets(undefined),
  ) {}

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_hooks (
        device_id  TEXT PRIMARY KEY,
        url        TEXT NOT NULL,
        sealed_url TEXT,
        events     TEXT NOT NULL,
        secret     TEXT NOT NULL,
        updated_at TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        seq              INTEGER PRIMARY KEY, -- log position of the event: per-device order, and the cursor
        id               TEXT NOT NULL UNIQUE,
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
        updated_at       INTEGER NOT NULL  -- ms; retention counts from here
      );
      CREATE INDEX IF NOT EXISTS webhook_deliveries_by_device ON webhook_deliveries (device_id, status, seq);
      CREATE INDEX IF NOT EXISTS webhook_deliveries_by_device_seq ON webhook_deliveries (device_id, seq);
      CREATE INDEX IF NOT EXISTS webhook_deliveries_finished ON webhook_deliveries (updated_at) WHERE status <> 'pending';
    `);
    // Tables of version 3 and before: reset() follows and empties them.
    addColumnIfMissing(db, 'webhook_hooks', 'sealed_url TEXT');
    addColumnIfMissing(db, 'webhook_deliveries', 'last_error_detail TEXT');
  }

  reset(db: Database.Database): void {
    this.forgetHooks();
    // The rows may hold URLs with credentials in clear (version 3 and before): their bytes are overwritten, not just freed.
    const secureDelete = db.pragma('secure_delete', { simple: true }) as number;
    db.pragma('secure_delete = ON');
    db.exec('DELETE FROM webhook_hooks');
    db.pragma(`secure_delete = ${secureDelete}`);
    db.exec('DELETE FROM webhook_deliveries');
  }

  apply(stored: StoredEvent): void {
    const at = stored.createdAt.getTime();
    const sql = this.sql();
    if (!isOwnEvent(stored)) {
      this.deliverable(stored, at);
      return;
    }
    const event = stored;
    switch (event.type) {
      case 'HooksConfigured': {
        const { deviceId, events, secret } = event.data;
        // Recorded in clear (before ENCRYPTION_KEY was set, or before URLs were sealed): sealed here when a key is.
        const { url, sealedUrl } =
          event.data.sealedUrl === undefined
            ? this.secrets.sealUrl(deviceId, event.data.url)
            : { url: event.data.url, sealedUrl: event.data.sealedUrl };
        this.forgetHook(deviceId);
        sql.upsertHook.run(deviceId, url, sealedUrl ?? null, JSON.stringify(events), secret, event.data.at);
        // Only the kinds the hook lists go out: those it no longer lists end as failed, as on a removal.
        if (!events.includes(ALL_EVENTS))
          sql.cancelPending.run({
            reason: "its kind was dropped from the hook's events",
            at,
            deviceId,
            listed: JSON.stringify(events),
          });
        return;
      }
      case 'HooksRemoved':
      case 'DeviceDeleted': {
        // Nothing more goes out for this device: what was still waiting ends as failed, with the reason.
        this.forgetHook(event.data.deviceId);
        sql.removeHook.run(event.data.deviceId);
        const reason = event.type === 'HooksRemoved' ? 'the hook configuration was removed' : 'the device was deleted';
        sql.cancelPending.run({ reason, at, deviceId: event.data.deviceId, listed: null });
        return;
      }
      case 'WebhookDeliveryAttempted': {
        const data = event.data;
        const nextAttemptAt = data.nextAttemptAt === undefined ? null : Date.parse(data.nextAttemptAt);
        // An attempt of an earlier round (a retry was requested meanwhile) counts, but decides nothing.
        // Positional parameters: one of these per attempt, and better-sqlite3 binds them faster than named ones.
        const status = data.outcome === 'retrying' ? 'pending' : data.outcome;
        const due = data.outcome === 'retrying' ? nextAttemptAt : null;
        // No answer: the device's view says `unreachable`, the reason (host not found, refused…) is the admin's.
        const unreachable = data.status === undefined && data.error !== undefined;
        sql.recordAttempt.run(
          data.status ?? null,
          unreachable ? UNREACHABLE : (data.error ?? null),
          unreachable ? data.error! : null,
          data.attemptedAt,
          Math.round(data.durationMs),
          data.round,
          status,
          data.round,
          due,
          data.round,
          at,
          data.deliveryId,
        );
        return;
      }
      case 'WebhookDeliveryRetryRequested': {
        // Requested against a read model that had not yet seen the hook removed (or the kind dropped): in the
        // log's order there is nothing to deliver it to.
        const hook = this.storedHook(event.data.deviceId);
        if (!hook) return;
        const changed = sql.requestRetry.run({
          id: event.data.deliveryId,
          at,
          all: hook.events.includes(ALL_EVENTS) ? 1 : 0,
          events: JSON.stringify(hook.events),
        });
        if (changed.changes > 0) this.notify(event.data.deviceId, true);
        return;
      }
    }
  }

  /** A domain event: a delivery when the device's hook asks for its kind. */
  private deliverable(stored: StoredEvent, at: number): void {
    // Most devices have no hook: asked first, the envelope is built only for events that may go out.
    const deviceId = (stored.data as { deviceId?: unknown } | null)?.deviceId;
    if (typeof deviceId === 'string' && !this.storedHook(deviceId)) return;
    const envelope = envelopeOf(stored);
    if (!envelope) return;
    const hook = this.storedHook(envelope.deviceId);
    if (!hook || !hookWants(hook.events, envelope.event)) return;
    this.sql().insertDelivery.run(
      stored.position,
      envelope.id,
      envelope.deviceId,
      envelope.event,
      JSON.stringify(envelope),
      at,
      envelope.timestamp,
      at,
    );
    this.notify(envelope.deviceId, false);
  }

  /**
   * The configuration with its secret and URL opened, as it is used (answers mask the URL's credentials).
   * Shared between callers: never change it.
   */
  hook(deviceId: string): HookView | undefined {
    let opened = this.openedHooks.get(deviceId);
    if (!opened) {
      const stored = this.storedHook(deviceId);
      if (!stored) return undefined;
      const { sealedUrl: _sealed, ...rest } = stored;
      opened = {
        ...rest,
        url: this.secrets.openUrl(deviceId, stored),
        secret: this.secrets.open(deviceId, stored.secret),
      };
      this.openedHooks.set(deviceId, opened);
    }
    return opened;
  }

  /** The URL the hook sends to (its credentials opened); undefined when none is configured. */
  hookUrl(deviceId: string): string | undefined {
    const stored = this.storedHook(deviceId);
    return stored && (this.openedHooks.get(deviceId)?.url ?? this.secrets.openUrl(deviceId, stored));
  }

  /** Drops the cached hook of a device whose row another process changed (src/projections/projector-link.ts). */
  forget(deviceId: string): void {
    this.forgetHook(deviceId);
  }

  private forgetHook(deviceId: string): void {
    this.hooks.delete(deviceId);
    this.openedHooks.delete(deviceId);
  }

  private forgetHooks(): void {
    this.hooks.clear();
    this.openedHooks.clear();
  }

  /** The configuration as stored (the secret, and a URL with credentials, sealed when ENCRYPTION_KEY is set). */
  private storedHook(deviceId: string): StoredHook | undefined {
    let view = this.hooks.get(deviceId);
    if (view === undefined) {
      const row = this.sql().hook.get(deviceId);
      view = row
        ? {
            url: row.url,
            ...(row.sealed_url === null ? {} : { sealedUrl: row.sealed_url }),
            events: JSON.parse(row.events) as HookEventName[],
            secret: row.secret,
            updatedAt: row.updated_at,
          }
        : null;
      this.hooks.set(deviceId, view);
    }
    return view ?? undefined;
  }

  /** The device's `count` oldest pending deliveries, oldest first. */
  pendingHeads(deviceId: string, count: number): PendingDelivery[] {
    return this.sql().heads.all(deviceId, count).map(toPending);
  }

  /** The device's `count` oldest pending deliveries after `seq`, oldest first (the dispatcher's read-ahead). */
  pendingAfter(deviceId: string, seq: number, count: number): PendingDelivery[] {
    return this.sql().headsAfter.all(deviceId, seq, count).map(toPending);
  }

  devicesWithPending(): string[] {
    return this.sql()
      .pendingDevices.all()
      .map((row) => row.device_id);
  }

  /** `detail`: with why an unreachable receiver was (the admin's view). */
  delivery(deviceId: string, id: string, detail = false): DeliveryView | undefined {
    const row = this.sql().byId.get(id, deviceId);
    return row && toView(row, detail);
  }

  /** Newest first; `before` is the seq the previous page ended at. */
  list(
    deviceId: string,
    options: { status?: DeliveryStatus; limit: number; before?: number; detail?: boolean },
  ): { items: DeliveryView[]; nextBefore: number | null } {
    const sql = this.sql();
    const before = options.before ?? Number.MAX_SAFE_INTEGER;
    const rows = options.status
      ? sql.pageInStatus.all(deviceId, options.status, before, options.limit + 1)
      : sql.page.all(deviceId, before, options.limit + 1);
    const page = rows.slice(0, options.limit);
    return {
      items: page.map((row) => toView(row, options.detail === true)),
      nextBefore: rows.length > options.limit ? page[page.length - 1].seq : null,
    };
  }

  /** Drops finished deliveries last changed before `before` (ms). Housekeeping outside the log: a rebuild prunes again. */
  prune(before: number): number {
    return this.sql().prune.run(before).changes;
  }

  /** apply() runs inside the runner's transaction: the dispatcher is told once it has committed. */
  private notify(deviceId: string, rewound: boolean): void {
    if (this.woken.size === 0) {
      setImmediate(() => {
        const devices = [...this.woken];
        this.woken.clear();
        for (const [id, olderPending] of devices) this.onWork(id, olderPending);
      });
    }
    this.woken.set(deviceId, rewound || this.woken.get(deviceId) === true);
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      upsertHook: db.prepare(
        `INSERT INTO webhook_hooks (device_id, url, sealed_url, events, secret, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(device_id) DO UPDATE SET url = excluded.url, sealed_url = excluded.sealed_url, events = excluded.events, secret = excluded.secret, updated_at = excluded.updated_at`,
      ),
      removeHook: db.prepare('DELETE FROM webhook_hooks WHERE device_id = ?'),
      hook: db.prepare<[string], HookRow>(
        'SELECT url, sealed_url, events, secret, updated_at FROM webhook_hooks WHERE device_id = ?',
      ),
      // A device's pending deliveries end as failed: all of them, or (`listed`, the JSON array of the kinds the hook
      // lists) those of the other kinds. A new round: an attempt still in flight, recorded later, counts but decides
      // nothing (it would make the delivery pending again, for whatever hook comes next).
      cancelPending: db.prepare<[{ reason: string; at: number; deviceId: string; listed: string | null }]>(
        `UPDATE webhook_deliveries SET status = 'failed', last_error = @reason, last_error_detail = NULL, next_attempt_at = NULL, updated_at = @at, round = round + 1
         WHERE device_id = @deviceId AND status = 'pending' AND (@listed IS NULL OR event NOT IN (SELECT value FROM json_each(@listed)))`,
      ),
      insertDelivery: db.prepare(
        `INSERT OR IGNORE INTO webhook_deliveries (seq, id, device_id, event, payload, status, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
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
        ]
      >(
        `UPDATE webhook_deliveries SET
           attempts = attempts + 1,
           last_status = ?, last_error = ?, last_error_detail = ?, last_attempt_at = ?, last_duration_ms = ?,
           status          = CASE WHEN round = ? THEN ? ELSE status END,
           next_attempt_at = CASE WHEN round = ? THEN ? ELSE next_attempt_at END,
           round_attempts  = CASE WHEN round = ? THEN round_attempts + 1 ELSE round_attempts END,
           updated_at = ?
         WHERE id = ?`,
      ),
      // Pending: it goes now, on its remaining schedule. Finished: it goes once more, now.
      requestRetry: db.prepare(
        `UPDATE webhook_deliveries SET
           round = round + 1,
           round_attempts = CASE WHEN status = 'pending' THEN round_attempts ELSE 0 END,
           final_round    = CASE WHEN status = 'pending' THEN final_round ELSE 1 END,
           status = 'pending', next_attempt_at = @at, updated_at = @at
         WHERE id = @id AND (@all = 1 OR event IN (SELECT value FROM json_each(@events)))`,
      ),
      heads: db.prepare<[string, number], DeliveryRow>(
        "SELECT * FROM webhook_deliveries WHERE device_id = ? AND status = 'pending' ORDER BY seq LIMIT ?",
      ),
      headsAfter: db.prepare<[string, number, number], DeliveryRow>(
        "SELECT * FROM webhook_deliveries WHERE device_id = ? AND status = 'pending' AND seq > ? ORDER BY seq LIMIT ?",
      ),
      pendingDevices: db.prepare<[], { device_id: string }>(
        "SELECT DISTINCT device_id FROM webhook_deliveries WHERE status = 'pending'",
      ),
      byId: db.prepare<[string, string], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE id = ? AND device_id = ?',
      ),
      page: db.prepare<[string, number, number], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE device_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
      ),
      pageInStatus: db.prepare<[string, DeliveryStatus, number, number], DeliveryRow>(
        'SELECT * FROM webhook_deliveries WHERE device_id = ? AND status = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
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
    payload: row.payload,
    attempts: row.attempts,
    round: row.round,
    roundAttempts: row.round_attempts,
    finalRound: row.final_round === 1,
    nextAttemptAt: row.next_attempt_at ?? 0,
  };
}

function toView(row: DeliveryRow, detail: boolean): DeliveryView {
  return {
    id: row.id,
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

function addColumnIfMissing(db: Database.Database, table: string, column: string): void {
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table) as string[];
  if (!columns.includes(column.split(' ')[0])) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column}`);
}
