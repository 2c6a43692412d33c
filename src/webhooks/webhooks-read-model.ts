import type Database from 'better-sqlite3';
import { DEVICE_EVENT_TYPES, type DeviceEvent, HOOK_EVENT_TYPES, type HookEvent } from '../devices/device-events.js';
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
import {
  DEFAULT_WEBHOOK_ID,
  GLOBAL_SCOPE,
  WEBHOOK_SETTINGS_EVENT_TYPES,
  type WebhookConfiguration,
  type WebhookSettingsEvent,
  isGlobalWebhookId,
} from './webhook-settings-events.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const isOwnEvent = eventGuard<HookEvent | DeliveryEvent | DeviceEvent | WebhookSettingsEvent>(
  new Set([...HOOK_EVENT_TYPES, ...DELIVERY_EVENT_TYPES, ...DEVICE_EVENT_TYPES, ...WEBHOOK_SETTINGS_EVENT_TYPES]),
);

/** A device's hook (the webhook `default`) as GET /hooks shows it. */
export interface HookView {
  url: string;
  events: HookEventName[];
  secret: string;
  updatedAt: string;
}

/** A webhook with its secret and URL opened, as it is used (answers mask the URL's credentials). */
export interface WebhookView extends Omit<WebhookConfiguration<HookEventName>, 'sealedUrl'> {
  webhookId: string;
  /** The device it belongs to; absent for a global webhook. */
  deviceId?: string;
  createdAt: string;
  updatedAt: string;
}

/** The configuration as the table keeps it: `url` masked when `sealedUrl` is set, the secret sealed with a key. */
interface StoredWebhook extends WebhookConfiguration<HookEventName> {
  webhookId: string;
  /** A device id, or GLOBAL_SCOPE. */
  scope: string;
  createdAt: string;
  updatedAt: string;
}

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

interface WebhookRow {
  scope: string;
  webhook_id: string;
  url: string;
  sealed_url: string | null;
  events: string;
  secret: string;
  description: string | null;
  devices: string | null;
  created_at: string;
  updated_at: string;
}

const HANDLED = new Set([
  ...WEBHOOK_SOURCE_EVENT_TYPES,
  ...HOOK_EVENT_TYPES,
  ...DELIVERY_EVENT_TYPES,
  ...WEBHOOK_SETTINGS_EVENT_TYPES,
  'DeviceDeleted',
]);

/** What the secrets are sealed with, as associated data: the device id for its hook (as before several webhooks). */
export const secretOwner = (scope: string, webhookId: string) =>
  webhookId === DEFAULT_WEBHOOK_ID ? scope : `${scope}/${webhookId}`;

/** The scope of a webhook's lane of a device. */
const scopeOf = (deviceId: string, webhookId: string) => (isGlobalWebhookId(webhookId) ? GLOBAL_SCOPE : deviceId);

const laneOf = (lane: LaneId | string): LaneId =>
  typeof lane === 'string' ? { deviceId: lane, webhookId: DEFAULT_WEBHOOK_ID } : lane;

/** Whether a global webhook takes the events of `deviceId`. */
const covers = (webhook: { devices?: string[] }, deviceId: string) =>
  webhook.devices === undefined || webhook.devices.includes(deviceId);

/**
 * The webhooks read model: every webhook (a device's hook, the webhook `default`; a device's further webhooks;
 * the global ones) with its configuration, and one delivery per webhook and domain event that the webhook asked
 * for (created when the event is applied, so only events after the webhook was configured and only of the kinds
 * it lists), with its progress folded from the delivery events. A webhook and a device make a lane. It is the
 * queue the dispatcher works from after a restart and the log behind the deliveries routes; rebuilt from the log,
 * it is the same. `onWork` is told which lane has something new to deliver (after the batch commits).
 */
export class WebhooksReadModel implements Projection {
  readonly name = 'webhooks';
  /**
   * 2: removing the hooks cancels their pending deliveries for good (a delivery in flight recorded later went pending again, for the next hook).
   * 3: a kind dropped from `events` cancels its pending deliveries; a retry requested after the hook was removed (or its
   * kind dropped) changes nothing (it went pending again, and out to whatever hook came next).
   * 4: a URL with credentials is kept masked, the URL itself sealed, when ENCRYPTION_KEY is set (also one recorded in
   * clear before); an attempt that got no answer keeps `unreachable` as its error and the reason apart, for the admin.
   * 5: several webhooks per device and global webhooks: a delivery per webhook and event (tables `webhook_targets`,
   * and `webhook_deliveries` keyed by webhook and log position); the hook is the webhook `default`.
   */
  readonly version = 5;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<WebhooksReadModel['prepare']> | undefined;
  /** `rewound`: a delivery older than those already pending became pending again (a retry was requested). */
  onWork: (deviceId: string, webhookId: string, rewound: boolean) => void = () => undefined;
  /** Told (inside the batch) of each scope whose webhooks apply() changed: the machine projector tells the workers. */
  onChanged: (scope: string) => void = () => undefined;
  private readonly woken = new Map<string, { lane: LaneId; rewound: boolean }>();
  /**
   * Webhooks by scope (a device id, or GLOBAL_SCOPE), read on every event and every attempt. apply() drops a
   * scope's entry before it changes its rows, so a cached value is never older than the table.
   */
  private readonly stored = new Map<string, readonly StoredWebhook[]>();
  /** The same with their secrets and URLs opened (on every attempt); dropped with `stored`'s entries. Shared: never changed. */
  private readonly opened = new Map<string, Map<string, WebhookView>>();

  /**
   * `secrets` opens the stored secrets and URLs (sealed when ENCRYPTION_KEY is set), and seals a URL with
   * credentials that an event recorded in clear (before the key was set, or before URLs were sealed).
   */
  constructor(
    private readonly db: Database.Database,
    private readonly secrets: HookSecrets = new HookSecrets(undefined),
  ) {}

  setup(db: Database.Database): void {
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

  reset(db: Database.Database): void {
    this.forgetAll();
    secureDelete(db, () => db.exec('DELETE FROM webhook_targets'));
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
        const { deviceId, events } = event.data;
        this.configure(deviceId, DEFAULT_WEBHOOK_ID, event.data, event.data.at);
        // Only the kinds the hook lists go out: those it no longer lists end as failed, as on a removal.
        this.cancel(DEFAULT_WEBHOOK_ID, deviceId, at, "its kind was dropped from the hook's events", events);
        return;
      }
      case 'WebhookCreated':
      case 'WebhookUpdated': {
        const { deviceId, webhookId, at: changedAt, ...configuration } = event.data;
        this.configure(deviceId ?? GLOBAL_SCOPE, webhookId, configuration, changedAt);
        if (event.type === 'WebhookCreated') return;
        this.cancel(webhookId, deviceId, at, "its kind was dropped from the webhook's events", configuration.events);
        if (deviceId === undefined && configuration.devices !== undefined)
          this.cancel(
            webhookId,
            undefined,
            at,
            "its device was dropped from the webhook's devices",
            undefined,
            configuration.devices,
          );
        return;
      }
      case 'HooksRemoved':
      case 'WebhookDeleted': {
        const deviceId = event.data.deviceId;
        const webhookId = event.type === 'HooksRemoved' ? DEFAULT_WEBHOOK_ID : event.data.webhookId;
        const scope = deviceId ?? GLOBAL_SCOPE;
        this.changed(scope);
        sql.removeWebhook.run(scope, webhookId);
        const reason = event.type === 'HooksRemoved' ? 'the hook configuration was removed' : 'the webhook was deleted';
        // Nothing more goes out to it: what was still waiting ends as failed, with the reason.
        this.cancel(webhookId, deviceId, at, reason);
        return;
      }
      case 'DeviceDeleted': {
        // Nothing more goes out for this device, to any webhook: what was still waiting ends as failed.
        const { deviceId } = event.data;
        this.changed(deviceId);
        sql.removeScope.run(deviceId);
        sql.cancelDevice.run({ reason: 'the device was deleted', at, deviceId });
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
          data.webhookId ?? DEFAULT_WEBHOOK_ID,
          data.deliveryId,
        );
        return;
      }
      case 'WebhookDeliveryRetryRequested': {
        // Requested against a read model that had not yet seen the webhook removed (or the kind dropped): in the
        // log's order there is nothing to deliver it to.
        const { deviceId } = event.data;
        const webhookId = event.data.webhookId ?? DEFAULT_WEBHOOK_ID;
        const webhook = this.storedWebhook(deviceId, webhookId);
        if (!webhook) return;
        const changed = sql.requestRetry.run({
          webhookId,
          deviceId,
          id: event.data.deliveryId,
          at,
          all: webhook.events.includes(ALL_EVENTS) ? 1 : 0,
          events: JSON.stringify(webhook.events),
        });
        if (changed.changes > 0) this.notify(deviceId, webhookId, true);
        return;
      }
    }
  }

  /** Records a webhook's configuration; a URL recorded in clear (before ENCRYPTION_KEY was set…) is sealed here when a key is. */
  private configure(scope: string, webhookId: string, configuration: WebhookConfiguration, changedAt: string): void {
    const owner = secretOwner(scope, webhookId);
    const { url, sealedUrl } =
      configuration.sealedUrl === undefined
        ? this.secrets.sealUrl(owner, configuration.url)
        : { url: configuration.url, sealedUrl: configuration.sealedUrl };
    this.changed(scope);
    this.sql().upsertWebhook.run(
      scope,
      webhookId,
      url,
      sealedUrl ?? null,
      JSON.stringify(configuration.events),
      configuration.secret,
      configuration.description ?? null,
      configuration.devices === undefined ? null : JSON.stringify(configuration.devices),
      changedAt,
      changedAt,
    );
  }

  /**
   * A lane's (or, `deviceId` undefined, a global webhook's) pending deliveries end as failed: all of them, or those
   * of the kinds not `listed` (unless it lists every kind), or those of the devices not in `devices`.
   */
  private cancel(
    webhookId: string,
    deviceId: string | undefined,
    at: number,
    reason: string,
    listed?: readonly string[],
    devices?: readonly string[],
  ): void {
    if (listed?.includes(ALL_EVENTS)) return;
    this.sql().cancelPending.run({
      reason,
      at,
      webhookId,
      deviceId: deviceId ?? null,
      listed: listed === undefined ? null : JSON.stringify(listed),
      devices: devices === undefined ? null : JSON.stringify(devices),
    });
  }

  /** A domain event: a delivery for each webhook of the device, and each global one, that asks for its kind. */
  private deliverable(stored: StoredEvent, at: number): void {
    // Most devices have no webhook: asked first, the envelope is built only for events that may go out.
    const deviceId = (stored.data as { deviceId?: unknown } | null)?.deviceId;
    if (typeof deviceId !== 'string') return;
    const own = this.scopeWebhooks(deviceId);
    const global = this.scopeWebhooks(GLOBAL_SCOPE);
    if (own.length === 0 && global.length === 0) return;
    const envelope = envelopeOf(stored);
    if (!envelope) return;
    let payload: string | undefined;
    for (const webhooks of [own, global]) {
      for (const webhook of webhooks) {
        if (!hookWants(webhook.events, envelope.event) || !covers(webhook, deviceId)) continue;
        this.sql().insertDelivery.run(
          webhook.webhookId,
          stored.position,
          envelope.id,
          deviceId,
          envelope.event,
          (payload ??= JSON.stringify(envelope)),
          at,
          envelope.timestamp,
          at,
        );
        this.notify(deviceId, webhook.webhookId, false);
      }
    }
  }

  /** The device's hook (the webhook `default`) as GET /hooks shows it, its secret opened (the URL not masked). */
  hook(deviceId: string): HookView | undefined {
    const webhook = this.webhook(deviceId, DEFAULT_WEBHOOK_ID);
    return (
      webhook && { url: webhook.url, events: webhook.events, secret: webhook.secret, updatedAt: webhook.updatedAt }
    );
  }

  /**
   * The webhook of a lane, with its secret and URL opened, as it is used (answers mask the URL's credentials);
   * undefined when it is gone or (a global webhook) no longer takes the device's events. Shared between callers
   * and kept until the webhook changes: never change it.
   */
  target(deviceId: string, webhookId: string): WebhookView | undefined {
    const scope = scopeOf(deviceId, webhookId);
    const webhook = this.webhook(scope, webhookId);
    return webhook && (scope === GLOBAL_SCOPE && !covers(webhook, deviceId) ? undefined : webhook);
  }

  /** A webhook of a scope (a device id, or GLOBAL_SCOPE), opened. Shared: never change it. */
  webhook(scope: string, webhookId: string): WebhookView | undefined {
    let views = this.opened.get(scope);
    let view = views?.get(webhookId);
    if (view) return view;
    const stored = this.scopeWebhooks(scope).find((webhook) => webhook.webhookId === webhookId);
    if (!stored) return undefined;
    const owner = secretOwner(scope, webhookId);
    const { sealedUrl: _sealed, scope: _scope, ...rest } = stored;
    view = {
      ...rest,
      ...(scope === GLOBAL_SCOPE ? {} : { deviceId: scope }),
      url: this.secrets.openUrl(owner, stored),
      secret: this.secrets.open(owner, stored.secret),
    };
    if (!views) this.opened.set(scope, (views = new Map<string, WebhookView>()));
    views.set(webhookId, view);
    return view;
  }

  /** A scope's webhooks, opened, oldest first. */
  webhooks(scope: string): WebhookView[] {
    return this.scopeWebhooks(scope).map((webhook) => this.webhook(scope, webhook.webhookId)!);
  }

  /** A webhook as stored, its URL as answers show it (credentials masked when sealed): nothing opened. */
  configured(scope: string, webhookId: string): { url: string; events: HookEventName[] } | undefined {
    const stored = this.scopeWebhooks(scope).find((webhook) => webhook.webhookId === webhookId);
    return stored && { url: stored.url, events: stored.events };
  }

  /** How many webhooks a scope has. */
  countOf(scope: string): number {
    return this.scopeWebhooks(scope).length;
  }

  /** The URL a webhook sends to (its credentials opened); undefined when there is no such webhook. */
  webhookUrl(scope: string, webhookId: string): string | undefined {
    const stored = this.scopeWebhooks(scope).find((webhook) => webhook.webhookId === webhookId);
    return (
      stored &&
      (this.opened.get(scope)?.get(webhookId)?.url ?? this.secrets.openUrl(secretOwner(scope, webhookId), stored))
    );
  }

  /** The URL the hook sends to (its credentials opened); undefined when none is configured. */
  hookUrl(deviceId: string): string | undefined {
    return this.webhookUrl(deviceId, DEFAULT_WEBHOOK_ID);
  }

  /** Drops the cached webhooks of a scope (a device id, or `_global`) the projector changed (src/projections/projector-link.ts). */
  forget(scope: string): void {
    this.forgetScope(scope);
  }

  /** apply() changes a scope's rows: its cached webhooks go, here and (told) in the workers. */
  private changed(scope: string): void {
    this.forgetScope(scope);
    this.onChanged(scope);
  }

  private forgetScope(scope: string): void {
    this.stored.delete(scope);
    this.opened.delete(scope);
  }

  private forgetAll(): void {
    this.stored.clear();
    this.opened.clear();
  }

  private storedWebhook(deviceId: string, webhookId: string): StoredWebhook | undefined {
    const scope = scopeOf(deviceId, webhookId);
    const webhook = this.scopeWebhooks(scope).find((candidate) => candidate.webhookId === webhookId);
    return webhook && (scope === GLOBAL_SCOPE && !covers(webhook, deviceId) ? undefined : webhook);
  }

  /** A scope's webhooks as stored (secrets, and URLs with credentials, sealed when ENCRYPTION_KEY is set). */
  private scopeWebhooks(scope: string): readonly StoredWebhook[] {
    let webhooks = this.stored.get(scope);
    if (webhooks === undefined) {
      webhooks = this.sql()
        .webhooksOf.all(scope)
        .map((row) => ({
          webhookId: row.webhook_id,
          scope: row.scope,
          url: row.url,
          ...(row.sealed_url === null ? {} : { sealedUrl: row.sealed_url }),
          events: JSON.parse(row.events) as HookEventName[],
          secret: row.secret,
          ...(row.description === null ? {} : { description: row.description }),
          ...(row.devices === null ? {} : { devices: JSON.parse(row.devices) as string[] }),
          createdAt: row.created_at,
          updatedAt: row.updated_at,
        }));
      this.stored.set(scope, webhooks);
    }
    return webhooks;
  }

  /** The lane's (a device id: its hook's) `count` oldest pending deliveries, oldest first. */
  pendingHeads(lane: LaneId | string, count: number): PendingDelivery[] {
    const { deviceId, webhookId } = laneOf(lane);
    return this.sql().heads.all(webhookId, deviceId, count).map(toPending);
  }

  /** The lane's `count` oldest pending deliveries after `seq`, oldest first (the dispatcher's read-ahead). */
  pendingAfter(lane: LaneId | string, seq: number, count: number): PendingDelivery[] {
    const { deviceId, webhookId } = laneOf(lane);
    return this.sql().headsAfter.all(webhookId, deviceId, seq, count).map(toPending);
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

  /** apply() runs inside the runner's transaction: the dispatcher is told once it has committed. */
  private notify(deviceId: string, webhookId: string, rewound: boolean): void {
    if (this.woken.size === 0) {
      setImmediate(() => {
        const lanes = [...this.woken.values()];
        this.woken.clear();
        for (const { lane, rewound: olderPending } of lanes) this.onWork(lane.deviceId, lane.webhookId, olderPending);
      });
    }
    const key = `${webhookId} ${deviceId}`;
    const woken = this.woken.get(key);
    if (woken) woken.rewound ||= rewound;
    else this.woken.set(key, { lane: { deviceId, webhookId }, rewound });
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      upsertWebhook: db.prepare(
        `INSERT INTO webhook_targets (scope, webhook_id, url, sealed_url, events, secret, description, devices, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(scope, webhook_id) DO UPDATE SET url = excluded.url, sealed_url = excluded.sealed_url, events = excluded.events,
           secret = excluded.secret, description = excluded.description, devices = excluded.devices, updated_at = excluded.updated_at`,
      ),
      removeWebhook: db.prepare('DELETE FROM webhook_targets WHERE scope = ? AND webhook_id = ?'),
      removeScope: db.prepare('DELETE FROM webhook_targets WHERE scope = ?'),
      webhooksOf: db.prepare<[string], WebhookRow>(
        'SELECT * FROM webhook_targets WHERE scope = ? ORDER BY created_at, webhook_id',
      ),
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
      heads: db.prepare<[string, string, number], DeliveryRow>(
        "SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND device_id = ? AND status = 'pending' ORDER BY seq LIMIT ?",
      ),
      headsAfter: db.prepare<[string, string, number, number], DeliveryRow>(
        "SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND device_id = ? AND status = 'pending' AND seq > ? ORDER BY seq LIMIT ?",
      ),
      pendingLanes: db.prepare<[], { webhook_id: string; device_id: string }>(
        "SELECT DISTINCT webhook_id, device_id FROM webhook_deliveries WHERE status = 'pending'",
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

/** Runs `work` with SQLite overwriting the bytes it frees (rows that held URLs with credentials in clear). */
function secureDelete(db: Database.Database, work: () => void): void {
  const before = db.pragma('secure_delete', { simple: true }) as number;
  db.pragma('secure_delete = ON');
  try {
    work();
  } finally {
    db.pragma(`secure_delete = ${before}`);
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
