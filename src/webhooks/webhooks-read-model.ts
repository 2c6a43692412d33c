import type Database from 'better-sqlite3';
import { DEVICE_EVENT_TYPES, type DeviceEvent, HOOK_EVENT_TYPES, type HookEvent } from '../devices/device-events.js';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { HookSecrets } from './hook-secrets.js';
import { UNREACHABLE } from './webhook-sender.js';
import type { Projection } from '../projections/projection.js';
import { DELIVERY_EVENT_TYPES, type DeliveryEvent } from './delivery-events.js';
import {
  type DeliveryPageOptions,
  DeliveryRecords,
  type DeliveryView,
  type LaneId,
  type PendingDelivery,
  type WebhookBacklog,
} from './delivery-records.js';
import { ALL_EVENTS, type HookEventName, WEBHOOK_SOURCE_EVENT_TYPES, envelopeOf, hookWants } from './envelope.js';
import { type HookView, WebhookTargets, type WebhookView, covers } from './webhook-targets.js';
import {
  DEFAULT_WEBHOOK_ID,
  GLOBAL_SCOPE,
  WEBHOOK_SETTINGS_EVENT_TYPES,
  type WebhookSettingsEvent,
} from './webhook-settings-events.js';
import { resetWebhookTables, setupWebhookTables } from './webhooks-schema.js';

export {
  DELIVERY_STATUSES,
  type DeliveryPageOptions,
  type DeliveryStatus,
  type DeliveryView,
  type LaneId,
  type PendingDelivery,
  type WebhookBacklog,
} from './delivery-records.js';
export { type HookView, type WebhookView, secretOwner } from './webhook-targets.js';

const isOwnEvent = eventGuard<HookEvent | DeliveryEvent | DeviceEvent | WebhookSettingsEvent>(
  new Set([...HOOK_EVENT_TYPES, ...DELIVERY_EVENT_TYPES, ...DEVICE_EVENT_TYPES, ...WEBHOOK_SETTINGS_EVENT_TYPES]),
);

const HANDLED = new Set([
  ...WEBHOOK_SOURCE_EVENT_TYPES,
  ...HOOK_EVENT_TYPES,
  ...DELIVERY_EVENT_TYPES,
  ...WEBHOOK_SETTINGS_EVENT_TYPES,
  'DeviceDeleted',
]);

/**
 * The webhooks read model: every webhook (a device's hook, the webhook `default`; a device's further webhooks;
 * the global ones) with its configuration, and one delivery per webhook and domain event that the webhook asked
 * for (created when the event is applied, so only events after the webhook was configured and only of the kinds
 * it lists), with its progress folded from the delivery events. A webhook and a device make a lane. It is the
 * queue the dispatcher works from after a restart and the log behind the deliveries routes; rebuilt from the log,
 * it is the same. `onWork` is told which lane has something new to deliver (after the batch commits). A thin
 * projection: the webhooks live in WebhookTargets (webhook-targets.ts), the records in DeliveryRecords
 * (delivery-records.ts), the tables in webhooks-schema.ts.
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
  /** `rewound`: a delivery older than those already pending became pending again (a retry was requested). */
  onWork: (deviceId: string, webhookId: string, rewound: boolean) => void = () => undefined;
  private readonly woken = new Map<string, { lane: LaneId; rewound: boolean }>();
  private readonly targets: WebhookTargets;
  private readonly records: DeliveryRecords;

  /**
   * `secrets` opens the stored secrets and URLs (sealed when ENCRYPTION_KEY is set), and seals a URL with
   * credentials that an event recorded in clear (before the key was set, or before URLs were sealed).
   */
  constructor(db: Database.Database, secrets: HookSecrets = new HookSecrets(undefined)) {
    this.targets = new WebhookTargets(db, secrets);
    this.records = new DeliveryRecords(db);
  }

  /** Told (inside the batch) of each scope whose webhooks apply() changed: the machine projector tells the workers. */
  set onChanged(listener: (scope: string) => void) {
    this.targets.onChanged = listener;
  }

  setup(db: Database.Database): void {
    setupWebhookTables(db);
  }

  reset(db: Database.Database): void {
    this.targets.forgetAll();
    resetWebhookTables(db);
  }

  /** A batch rolled back: webhooks it configured and then read were cached, and the table has them no more. */
  discard(): void {
    this.targets.forgetAll();
  }

  apply(stored: StoredEvent): void {
    const at = stored.createdAt.getTime();
    if (!isOwnEvent(stored)) {
      this.deliverable(stored, at);
      return;
    }
    const event = stored;
    switch (event.type) {
      case 'HooksConfigured': {
        const { deviceId, events } = event.data;
        this.targets.configure(deviceId, DEFAULT_WEBHOOK_ID, event.data, event.data.at);
        // Only the kinds the hook lists go out: those it no longer lists end as failed, as on a removal.
        this.cancel(DEFAULT_WEBHOOK_ID, deviceId, at, "its kind was dropped from the hook's events", events);
        return;
      }
      case 'WebhookCreated':
      case 'WebhookUpdated': {
        const { deviceId, webhookId, at: changedAt, ...configuration } = event.data;
        this.targets.configure(deviceId ?? GLOBAL_SCOPE, webhookId, configuration, changedAt);
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
        this.targets.remove(scope, webhookId);
        const reason = event.type === 'HooksRemoved' ? 'the hook configuration was removed' : 'the webhook was deleted';
        // Nothing more goes out to it: what was still waiting ends as failed, with the reason.
        this.cancel(webhookId, deviceId, at, reason);
        return;
      }
      case 'DeviceDeleted': {
        // Nothing more goes out for this device, to any webhook: what was still waiting ends as failed.
        const { deviceId } = event.data;
        this.targets.removeScope(deviceId);
        this.records.cancelDevice(deviceId, at, 'the device was deleted');
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
        this.records.recordAttempt(
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
        const webhook = this.targets.storedWebhook(deviceId, webhookId);
        if (!webhook) return;
        const changed = this.records.requestRetry({
          webhookId,
          deviceId,
          id: event.data.deliveryId,
          at,
          all: webhook.events.includes(ALL_EVENTS) ? 1 : 0,
          events: JSON.stringify(webhook.events),
        });
        if (changed) this.notify(deviceId, webhookId, true);
        return;
      }
    }
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
    this.records.cancel({
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
    const own = this.targets.scopeWebhooks(deviceId);
    const global = this.targets.scopeWebhooks(GLOBAL_SCOPE);
    if (own.length === 0 && global.length === 0) return;
    const envelope = envelopeOf(stored);
    if (!envelope) return;
    let payload: string | undefined;
    for (const webhooks of [own, global]) {
      for (const webhook of webhooks) {
        if (!hookWants(webhook.events, envelope.event) || !covers(webhook, deviceId)) continue;
        this.records.insert({
          webhookId: webhook.webhookId,
          seq: stored.position,
          id: envelope.id,
          deviceId,
          event: envelope.event,
          payload: (payload ??= JSON.stringify(envelope)),
          nextAttemptAt: at,
          createdAt: envelope.timestamp,
          at,
        });
        this.notify(deviceId, webhook.webhookId, false);
      }
    }
  }

  /** The device's hook (the webhook `default`) as GET /hooks shows it, its secret opened (the URL not masked). */
  hook(deviceId: string): HookView | undefined {
    return this.targets.hook(deviceId);
  }

  /** The webhook of a lane, opened; undefined when gone or (global) no longer taking the device (WebhookTargets.target). */
  target(deviceId: string, webhookId: string): WebhookView | undefined {
    return this.targets.target(deviceId, webhookId);
  }

  /** A webhook of a scope (a device id, or GLOBAL_SCOPE), opened. Shared: never change it. */
  webhook(scope: string, webhookId: string): WebhookView | undefined {
    return this.targets.webhook(scope, webhookId);
  }

  /** A scope's webhooks, opened, oldest first. */
  webhooks(scope: string): WebhookView[] {
    return this.targets.webhooks(scope);
  }

  /** A webhook as stored, its URL as answers show it (credentials masked when sealed): nothing opened. */
  configured(scope: string, webhookId: string): { url: string; events: HookEventName[] } | undefined {
    return this.targets.configured(scope, webhookId);
  }

  /** How many webhooks a scope has. */
  countOf(scope: string): number {
    return this.targets.countOf(scope);
  }

  /** The URL a webhook sends to (its credentials opened); undefined when there is no such webhook. */
  webhookUrl(scope: string, webhookId: string): string | undefined {
    return this.targets.webhookUrl(scope, webhookId);
  }

  /** The URL the hook sends to (its credentials opened); undefined when none is configured. */
  hookUrl(deviceId: string): string | undefined {
    return this.targets.hookUrl(deviceId);
  }

  /** Drops the cached webhooks of a scope (a device id, or `_global`) the projector changed (src/projections/projector-link.ts). */
  forget(scope: string): void {
    this.targets.forget(scope);
  }

  /** The lane's (a device id: its hook's) `count` oldest pending deliveries, oldest first. */
  pendingHeads(lane: LaneId | string, count: number): PendingDelivery[] {
    return this.records.pendingHeads(lane, count);
  }

  /** The lane's `count` oldest pending deliveries after `seq`, oldest first (the dispatcher's read-ahead). */
  pendingAfter(lane: LaneId | string, seq: number, count: number): PendingDelivery[] {
    return this.records.pendingAfter(lane, seq, count);
  }

  /** The devices with something pending, for any webhook. */
  devicesWithPending(): string[] {
    return this.records.devicesWithPending();
  }

  lanesWithPending(): LaneId[] {
    return this.records.lanesWithPending();
  }

  /** Per device with something pending: how many deliveries wait, and since when the oldest. */
  backlogByDevice(): Map<string, WebhookBacklog> {
    return this.records.backlogByDevice();
  }

  /** The webhooks with something pending for the device. */
  webhooksWithPending(deviceId: string): string[] {
    return this.records.webhooksWithPending(deviceId);
  }

  /** A webhook's delivery; `deviceId` undefined: of any device (DeliveryRecords.webhookDelivery). */
  webhookDelivery(
    webhookId: string,
    deviceId: string | undefined,
    id: string,
    detail = false,
  ): DeliveryView | undefined {
    return this.records.webhookDelivery(webhookId, deviceId, id, detail);
  }

  /** A delivery of the device's hook (the webhook `default`). */
  delivery(deviceId: string, id: string, detail = false): DeliveryView | undefined {
    return this.records.delivery(deviceId, id, detail);
  }

  /** The log of the device's hook (the webhook `default`), newest first. */
  list(deviceId: string, options: DeliveryPageOptions): { items: DeliveryView[]; nextBefore: number | null } {
    return this.records.list(deviceId, options);
  }

  /** Newest first; `before` is the seq the previous page ended at. `deviceId` undefined: every device's (global). */
  webhookDeliveries(
    webhookId: string,
    deviceId: string | undefined,
    options: DeliveryPageOptions,
  ): { items: DeliveryView[]; nextBefore: number | null } {
    return this.records.webhookDeliveries(webhookId, deviceId, options);
  }

  /** Drops finished deliveries last changed before `before` (ms). Housekeeping outside the log: a rebuild prunes again. */
  prune(before: number): number {
    return this.records.prune(before);
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
}
