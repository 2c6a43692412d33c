/**
 * Commands and views of the webhooks of a scope: a device's (its hook, the webhook `default`, written through
 * HookSettings on the device's registry stream; the further ones on `webhook-settings-<deviceId>`) or the
 * global ones (`webhook-settings-_global`). Answers come once the webhooks read model includes the change, so
 * that the next event is judged by it.
 */
import { randomBytes } from 'node:crypto';
import { CommandHandler } from '../commands/command-handler.js';
import { DomainError, invalidField } from '../errors/domain-error.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { hasMaskedCredentials, maskUrlCredentials } from '../secrets/url-credentials.js';
import type { HookEventName } from './envelope.js';
import type { HookSecrets } from './hook-secrets.js';
import { type HookSettings, hooksNotConfigured, newHookSecret } from './hook-settings.js';
import {
  type WebhookSettingsCommand,
  type WebhookSettingsState,
  MAX_GLOBAL_WEBHOOKS,
  MAX_WEBHOOKS_PER_DEVICE,
  webhookNotFound,
  webhookSettingsDecider,
} from './webhook-settings-decider.js';
import {
  DEFAULT_WEBHOOK_ID,
  DEVICE_WEBHOOK_ID_PREFIX,
  GLOBAL_SCOPE,
  GLOBAL_WEBHOOK_ID_PREFIX,
  type WebhookConfiguration,
  type WebhookSettingsEvent,
  webhookSettingsStream,
} from './webhook-settings-events.js';
import { type WebhookView, type WebhooksReadModel, secretOwner } from './webhooks-read-model.js';

export interface CreateWebhook {
  url: string;
  events: HookEventName[];
  /** `whsec_` + base64; made when absent. */
  secret?: string;
  description?: string;
  /** Global webhooks only. */
  devices?: string[];
}

export interface UpdateWebhook {
  url?: string;
  events?: HookEventName[];
  secret?: string;
  rotateSecret?: boolean;
  description?: string | null;
  devices?: string[] | null;
}

/** A webhook as answers show it: its secret, its URL's credentials masked. */
export interface WebhookAnswer {
  webhookId: string;
  url: string;
  events: HookEventName[];
  secret: string;
  description?: string;
  devices?: string[];
  createdAt: string;
  updatedAt: string;
}

/** The one writer of the webhook settings streams. */
export type WebhookSettingsCommands = CommandHandler<
  WebhookSettingsState,
  WebhookSettingsCommand,
  WebhookSettingsEvent
>;

export function createWebhookSettingsCommands(store: EventStore): WebhookSettingsCommands {
  return new CommandHandler({ store, decider: webhookSettingsDecider, cacheSize: 1_000 });
}

const newWebhookId = (global: boolean) =>
  `${global ? GLOBAL_WEBHOOK_ID_PREFIX : DEVICE_WEBHOOK_ID_PREFIX}${randomBytes(8).toString('hex')}`;

/** A secret a client brings: `whsec_` and base64 of 24 to 64 bytes (standardwebhooks reads it). */
function checkSecret(secret: string): void {
  const base64 = secret.slice('whsec_'.length);
  const bytes = Buffer.from(base64, 'base64');
  if (!secret.startsWith('whsec_') || bytes.toString('base64') !== base64 || bytes.length < 24 || bytes.length > 64)
    throw invalidField('/secret', 'must be `whsec_` followed by the base64 of 24 to 64 bytes');
}

export class WebhookRegistry {
  constructor(
    private readonly writer: WebhookSettingsCommands,
    private readonly hooks: HookSettings,
    private readonly progress: ReadModelProgress,
    private readonly model: WebhooksReadModel,
    private readonly secrets: HookSecrets,
  ) {}

  /** `deviceId` undefined: a global webhook. */
  async create(deviceId: string | undefined, input: CreateWebhook): Promise<WebhookAnswer> {
    if (input.secret !== undefined) checkSecret(input.secret);
    const scope = deviceId ?? GLOBAL_SCOPE;
    const webhookId = newWebhookId(deviceId === undefined);
    const owner = secretOwner(scope, webhookId);
    if (hasMaskedCredentials(input.url)) throw maskedUrl();
    const configuration: WebhookConfiguration = {
      ...this.secrets.sealUrl(owner, input.url),
      events: input.events,
      secret: this.secrets.seal(owner, input.secret ?? newHookSecret()),
      ...(input.description === undefined ? {} : { description: input.description }),
      ...(input.devices === undefined ? {} : { devices: input.devices }),
    };
    const { position } = await this.writer.handle(webhookSettingsStream(scope), {
      type: 'CreateWebhook',
      ...(deviceId === undefined ? {} : { deviceId }),
      webhookId,
      configuration,
      limit: deviceId === undefined ? MAX_GLOBAL_WEBHOOKS : MAX_WEBHOOKS_PER_DEVICE,
      elsewhere: deviceId !== undefined && this.model.configured(deviceId, DEFAULT_WEBHOOK_ID) ? 1 : 0,
      at: new Date().toISOString(),
    });
    await this.progress.settle(position);
    return this.get(deviceId, webhookId);
  }

  /** The scope's webhooks, oldest first (a device's hook, when it has one, among them as `default`). */
  list(deviceId: string | undefined): WebhookAnswer[] {
    return this.model.webhooks(deviceId ?? GLOBAL_SCOPE).map(answer);
  }

  get(deviceId: string | undefined, webhookId: string): WebhookAnswer {
    const webhook = this.model.webhook(deviceId ?? GLOBAL_SCOPE, webhookId);
    if (!webhook) throw notFound(deviceId, webhookId);
    return answer(webhook);
  }

  /** Answers not_found (hooks_not_configured for `default`) unless the webhook is there; opens nothing. */
  mustExist(deviceId: string | undefined, webhookId: string): void {
    if (!this.model.configured(deviceId ?? GLOBAL_SCOPE, webhookId)) throw notFound(deviceId, webhookId);
  }

  async update(deviceId: string | undefined, webhookId: string, input: UpdateWebhook): Promise<WebhookAnswer> {
    const scope = deviceId ?? GLOBAL_SCOPE;
    const current = this.model.configured(scope, webhookId);
    if (!current) throw notFound(deviceId, webhookId);
    if (deviceId !== undefined && webhookId === DEFAULT_WEBHOOK_ID) return this.updateHook(deviceId, current, input);
    if (input.secret !== undefined) {
      checkSecret(input.secret);
      if (input.rotateSecret === true) throw invalidField('/secret', 'and `rotateSecret` exclude each other');
    }
    const owner = secretOwner(scope, webhookId);
    const secret = input.secret ?? (input.rotateSecret === true ? newHookSecret() : undefined);
    const url = input.url === undefined ? undefined : this.urlOf(scope, webhookId, input.url);
    const { position } = await this.writer.handle(webhookSettingsStream(scope), {
      type: 'UpdateWebhook',
      ...(deviceId === undefined ? {} : { deviceId }),
      webhookId,
      changes: {
        ...(url === undefined ? {} : this.secrets.sealUrl(owner, url)),
        ...(input.events === undefined ? {} : { events: input.events }),
        ...(secret === undefined ? {} : { secret: this.secrets.seal(owner, secret) }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.devices === undefined ? {} : { devices: input.devices }),
      },
      at: new Date().toISOString(),
    });
    await this.progress.settle(position);
    return this.get(deviceId, webhookId);
  }

  async remove(deviceId: string | undefined, webhookId: string): Promise<void> {
    const scope = deviceId ?? GLOBAL_SCOPE;
    if (!this.model.configured(scope, webhookId)) throw notFound(deviceId, webhookId);
    if (deviceId !== undefined && webhookId === DEFAULT_WEBHOOK_ID) {
      await this.hooks.remove(deviceId);
      return;
    }
    const { position } = await this.writer.handle(webhookSettingsStream(scope), {
      type: 'DeleteWebhook',
      ...(deviceId === undefined ? {} : { deviceId }),
      webhookId,
    });
    await this.progress.settle(position);
  }

  /** The webhook `default` is the device's hook: its changes are the hook's (PUT /hooks), with what it has. */
  private async updateHook(
    deviceId: string,
    current: { url: string; events: HookEventName[] },
    input: UpdateWebhook,
  ): Promise<WebhookAnswer> {
    for (const field of ['secret', 'description'] as const)
      if (input[field] !== undefined)
        throw invalidField(`/${field}`, 'is not a setting of the webhook `default` (the hook of PUT /hooks)');
    await this.hooks.configure(deviceId, {
      url: input.url ?? maskUrlCredentials(current.url),
      events: input.events ?? current.events,
      ...(input.rotateSecret === undefined ? {} : { rotateSecret: input.rotateSecret }),
    });
    return this.get(deviceId, DEFAULT_WEBHOOK_ID);
  }

  /** The URL to record: the stored one when `url` is how answers show it; `***` credentials otherwise are refused. */
  private urlOf(scope: string, webhookId: string, url: string): string {
    if (!hasMaskedCredentials(url)) return url;
    let stored: string | undefined;
    try {
      stored = this.model.webhookUrl(scope, webhookId);
    } catch {
      stored = undefined; // sealed with another key: only new credentials replace it
    }
    if (stored !== undefined && maskUrlCredentials(stored) === url) return stored;
    throw maskedUrl();
  }
}

const maskedUrl = () =>
  invalidField(
    '/url',
    'has `***` credentials, the mask answers show in place of the stored ones: send the real credentials, or the URL exactly as the webhook shows it to keep the stored one',
  );

function notFound(deviceId: string | undefined, webhookId: string): DomainError {
  return deviceId !== undefined && webhookId === DEFAULT_WEBHOOK_ID
    ? hooksNotConfigured(deviceId)
    : webhookNotFound(webhookId);
}

function answer(webhook: WebhookView): WebhookAnswer {
  return {
    webhookId: webhook.webhookId,
    url: maskUrlCredentials(webhook.url),
    events: webhook.events,
    secret: webhook.secret,
    ...(webhook.description === undefined ? {} : { description: webhook.description }),
    ...(webhook.devices === undefined ? {} : { devices: webhook.devices }),
    createdAt: webhook.createdAt,
    updatedAt: webhook.updatedAt,
  };
}
