/**
 * Webhooks beyond a device's hook (`/hooks`, the webhook `default`, kept on the device's registry stream):
 * the further webhooks of a device (`POST /devices/:id/webhooks`) on `webhook-settings-<deviceId>`, and the
 * global webhooks (admin, `POST /webhooks`) on `webhook-settings-_global` (`_` starts no device id). One
 * decider writes both (webhook-settings-decider.ts).
 *
 * The events carry the signing secret, kept nowhere else: whatever shows them must redact `data.secret` and
 * mask `data.url`'s credentials (sealed with ENCRYPTION_KEY as for hooks: hook-secrets.ts).
 */
import type { HookConfiguration } from '../devices/device-events.js';

export const WEBHOOK_SETTINGS_PREFIX = 'webhook-settings-';
/** The scope of the global webhooks: a stream id no device can have. */
export const GLOBAL_SCOPE = '_global';
/** The stream of a device's further webhooks, or (GLOBAL_SCOPE) of the global ones. */
export const webhookSettingsStream = (scope: string) => `${WEBHOOK_SETTINGS_PREFIX}${scope}`;

/** The id of the webhook that is the device's hook (`/hooks`). */
export const DEFAULT_WEBHOOK_ID = 'default';
/** Ids of global webhooks start so: a lane (webhook, device) tells a global webhook from a device's by its id. */
export const GLOBAL_WEBHOOK_ID_PREFIX = 'gwh_';
export const DEVICE_WEBHOOK_ID_PREFIX = 'wh_';
export const isGlobalWebhookId = (webhookId: string) => webhookId.startsWith(GLOBAL_WEBHOOK_ID_PREFIX);

export interface WebhookConfiguration<Kind extends string = string> extends HookConfiguration<Kind> {
  description?: string;
  /** Global webhooks only: the devices whose events it receives (absent: every device). */
  devices?: string[];
}

/** `deviceId` is absent for a global webhook. */
export type WebhookConfiguredData = { deviceId?: string; webhookId: string; at: string } & WebhookConfiguration;

export type WebhookSettingsEvent =
  | { type: 'WebhookCreated'; data: WebhookConfiguredData }
  | { type: 'WebhookUpdated'; data: WebhookConfiguredData }
  | { type: 'WebhookDeleted'; data: { deviceId?: string; webhookId: string } };

export const WEBHOOK_SETTINGS_EVENT_TYPES: ReadonlySet<string> = new Set<WebhookSettingsEvent['type']>([
  'WebhookCreated',
  'WebhookUpdated',
  'WebhookDeleted',
]);
