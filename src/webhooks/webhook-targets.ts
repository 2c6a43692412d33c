/**
 * The webhooks read model's webhooks (`webhook_targets`, src/webhooks/webhooks-schema.ts): a device's hook (the
 * webhook `default`), a device's further webhooks and the global ones (scope `_global`), each with its
 * configuration, cached by scope and opened (secret, URL credentials) once until it changes. Written by
 * WebhooksReadModel.apply only; `onChanged` tells which scope it changed (the machine projector tells the workers,
 * whose forget() drops it).
 */
import type Database from 'better-sqlite3';
import type { HookEventName } from './envelope.js';
import { HookSecrets } from './hook-secrets.js';
import {
  DEFAULT_WEBHOOK_ID,
  GLOBAL_SCOPE,
  type WebhookConfiguration,
  isGlobalWebhookId,
} from './webhook-settings-events.js';

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
export interface StoredWebhook extends WebhookConfiguration<HookEventName> {
  webhookId: string;
  /** A device id, or GLOBAL_SCOPE. */
  scope: string;
  createdAt: string;
  updatedAt: string;
  /** A global webhook's `devices` as a set: asked for every event of every device. */
  covered?: ReadonlySet<string>;
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

/** What the secrets are sealed with, as associated data: the device id for its hook (as before several webhooks). */
export const secretOwner = (scope: string, webhookId: string) =>
  webhookId === DEFAULT_WEBHOOK_ID ? scope : `${scope}/${webhookId}`;

/** The scope of a webhook's lane of a device. */
export const scopeOf = (deviceId: string, webhookId: string) =>
  isGlobalWebhookId(webhookId) ? GLOBAL_SCOPE : deviceId;

/** Whether a global webhook takes the events of `deviceId`. */
export const covers = (webhook: StoredWebhook, deviceId: string) =>
  webhook.covered === undefined || webhook.covered.has(deviceId);

export class WebhookTargets {
  /** Told (inside the batch) of each scope whose webhooks changed. */
  onChanged: (scope: string) => void = () => undefined;
  private statements: ReturnType<WebhookTargets['prepare']> | undefined;
  /**
   * Webhooks by scope (a device id, or GLOBAL_SCOPE), read on every event and every attempt. A change drops a
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

  /** Records a webhook's configuration; a URL recorded in clear (before ENCRYPTION_KEY was set…) is sealed here when a key is. */
  configure(scope: string, webhookId: string, configuration: WebhookConfiguration, changedAt: string): void {
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

  /** A webhook is deleted. */
  remove(scope: string, webhookId: string): void {
    this.changed(scope);
    this.sql().removeWebhook.run(scope, webhookId);
  }

  /** Every webhook of a scope (a deleted device's) goes. */
  removeScope(scope: string): void {
    this.changed(scope);
    this.sql().removeScope.run(scope);
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
    return this.storedWebhook(deviceId, webhookId) && this.webhook(scopeOf(deviceId, webhookId), webhookId);
  }

  /** A webhook of a scope (a device id, or GLOBAL_SCOPE), opened. Shared: never change it. */
  webhook(scope: string, webhookId: string): WebhookView | undefined {
    let views = this.opened.get(scope);
    let view = views?.get(webhookId);
    if (view) return view;
    const stored = this.scopeWebhooks(scope).find((webhook) => webhook.webhookId === webhookId);
    if (!stored) return undefined;
    const owner = secretOwner(scope, webhookId);
    const { sealedUrl: _sealed, scope: _scope, covered: _covered, ...rest } = stored;
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

  forgetAll(): void {
    this.stored.clear();
    this.opened.clear();
  }

  storedWebhook(deviceId: string, webhookId: string): StoredWebhook | undefined {
    const scope = scopeOf(deviceId, webhookId);
    const webhook = this.scopeWebhooks(scope).find((candidate) => candidate.webhookId === webhookId);
    return webhook && (scope === GLOBAL_SCOPE && !covers(webhook, deviceId) ? undefined : webhook);
  }

  /** A scope's webhooks as stored (secrets, and URLs with credentials, sealed when ENCRYPTION_KEY is set). */
  scopeWebhooks(scope: string): readonly StoredWebhook[] {
    let webhooks = this.stored.get(scope);
    if (webhooks === undefined) {
      webhooks = this.sql()
        .webhooksOf.all(scope)
        .map((row): StoredWebhook => {
          const devices = row.devices === null ? undefined : (JSON.parse(row.devices) as string[]);
          return {
            webhookId: row.webhook_id,
            scope: row.scope,
            url: row.url,
            ...(row.sealed_url === null ? {} : { sealedUrl: row.sealed_url }),
            events: JSON.parse(row.events) as HookEventName[],
            secret: row.secret,
            ...(row.description === null ? {} : { description: row.description }),
            ...(devices === undefined ? {} : { devices, covered: new Set(devices) }),
            createdAt: row.created_at,
            updatedAt: row.updated_at,
          };
        });
      this.stored.set(scope, webhooks);
    }
    return webhooks;
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
    };
  }
}
