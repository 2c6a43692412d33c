/**
 * The decider of the webhook settings streams (`webhook-settings-<deviceId>` and `webhook-settings-_global`):
 * a scope's webhooks with their configurations. Pure: the caller brings the id, the secret and the time.
 */
import type { Decider } from '../commands/decider.js';
import { DomainError } from '../errors/domain-error.js';
import {
  WEBHOOK_SETTINGS_EVENT_TYPES,
  type WebhookConfiguration,
  type WebhookSettingsEvent,
} from './webhook-settings-events.js';

/** At most this many webhooks per device (its hook included), and this many global ones. */
export const MAX_WEBHOOKS_PER_DEVICE = 10;
export const MAX_GLOBAL_WEBHOOKS = 10;

export type WebhookSetting = WebhookConfiguration & { createdAt: string; updatedAt: string };

export interface WebhookSettingsState {
  webhooks: Readonly<Record<string, WebhookSetting>>;
}

/** `deviceId` is absent for the global scope. */
export type WebhookSettingsCommand =
  | {
      type: 'CreateWebhook';
      deviceId?: string;
      webhookId: string;
      configuration: WebhookConfiguration;
      /** How many webhooks the scope may have, and how many it has outside this stream (the device's hook). */
      limit: number;
      elsewhere: number;
      at: string;
    }
  | {
      type: 'UpdateWebhook';
      deviceId?: string;
      webhookId: string;
      /** What changes; `secret` replaces the current one. `description: null` or `devices: null` removes it. */
      changes: Partial<Omit<WebhookConfiguration, 'description' | 'devices'>> & {
        description?: string | null;
        devices?: string[] | null;
      };
      at: string;
    }
  | { type: 'DeleteWebhook'; deviceId?: string; webhookId: string };

export const webhookNotFound = (webhookId: string) =>
  new DomainError('not_found', `webhook "${webhookId}" does not exist`);

export const tooManyWebhooks = (limit: number) =>
  new DomainError('too_many_webhooks', `at most ${limit} webhooks; delete one first`);

export const webhookSettingsDecider: Decider<WebhookSettingsState, WebhookSettingsCommand, WebhookSettingsEvent> = {
  eventTypes: WEBHOOK_SETTINGS_EVENT_TYPES,

  initialState: () => ({ webhooks: {} }),

  evolve(state, event) {
    switch (event.type) {
      case 'WebhookCreated':
      case 'WebhookUpdated': {
        const { deviceId: _device, webhookId, at, ...configuration } = event.data;
        const createdAt = state.webhooks[webhookId]?.createdAt ?? at;
        return { webhooks: { ...state.webhooks, [webhookId]: { ...configuration, createdAt, updatedAt: at } } };
      }
      case 'WebhookDeleted': {
        const { [event.data.webhookId]: _removed, ...rest } = state.webhooks;
        return { webhooks: rest };
      }
    }
  },

  decide(command, state) {
    const scope = command.deviceId === undefined ? {} : { deviceId: command.deviceId };
    switch (command.type) {
      case 'CreateWebhook': {
        if (state.webhooks[command.webhookId]) return []; // the same id twice: created already
        if (Object.keys(state.webhooks).length + command.elsewhere >= command.limit)
          throw tooManyWebhooks(command.limit);
        return [
          {
            type: 'WebhookCreated',
            data: { ...scope, webhookId: command.webhookId, ...command.configuration, at: command.at },
          },
        ];
      }
      case 'UpdateWebhook': {
        const current = state.webhooks[command.webhookId];
        if (!current) throw webhookNotFound(command.webhookId);
        const { createdAt: _created, updatedAt: _updated, ...configuration } = current;
        const { description, devices, ...changes } = command.changes;
        const next: WebhookConfiguration = { ...configuration, ...changes };
        if (changes.url !== undefined && changes.sealedUrl === undefined) delete next.sealedUrl;
        if (description === null) delete next.description;
        else if (description !== undefined) next.description = description;
        if (devices === null) delete next.devices;
        else if (devices !== undefined) next.devices = devices;
        return [{ type: 'WebhookUpdated', data: { ...scope, webhookId: command.webhookId, ...next, at: command.at } }];
      }
      case 'DeleteWebhook':
        if (!state.webhooks[command.webhookId]) throw webhookNotFound(command.webhookId);
        return [{ type: 'WebhookDeleted', data: { ...scope, webhookId: command.webhookId } }];
    }
  },
};
