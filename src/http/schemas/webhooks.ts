/**
 * The schemas of the webhooks routes (several per device, and global ones): built on those of /hooks, whose
 * webhook is the device's `default`.
 */
import Type from 'typebox';
import { MAX_WEBHOOKS_PER_DEVICE } from '../../webhooks/webhook-settings-decider.js';
import { DeviceId, Timestamp } from './common.js';
import { DeliveryId, DeliverySchema, Events, HookUrl } from './hooks.js';

export const WebhookId = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: "Webhook id: `default` (a device's hook, `/hooks`), `wh_…` (a device's) or `gwh_…` (a global one).",
});
const SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]{32,88}={0,2}$';
const SECRET_MEANING = 'Standard Webhooks signing secret: `whsec_` + base64 of 24 to 64 bytes.';
const Secret = Type.String({ pattern: SECRET_PATTERN, description: SECRET_MEANING });
const Description = Type.String({ minLength: 1, maxLength: 256, description: 'For the reader; not sent.' });
const Devices = Type.Array(DeviceId, {
  minItems: 1,
  maxItems: 1000,
  uniqueItems: true,
  description: 'Only the events of these devices (absent: of every device, present and future).',
});
const closed = { additionalProperties: false } as const;

const created = {
  url: HookUrl,
  events: Events,
  secret: Type.Optional(Type.String({ pattern: SECRET_PATTERN, description: `${SECRET_MEANING} Made when absent.` })),
  description: Type.Optional(Description),
};
export const CreateWebhookBody = Type.Object(created, closed);
export const CreateGlobalWebhookBody = Type.Object({ ...created, devices: Type.Optional(Devices) }, closed);

const changes = {
  url: Type.Optional(HookUrl),
  events: Type.Optional(Events),
  secret: Type.Optional(Secret),
  rotateSecret: Type.Optional(
    Type.Boolean({ description: 'Make a new signing secret; the old one stops being used at once.' }),
  ),
  description: Type.Optional(Type.Union([Description, Type.Null()], { description: 'null removes it.' })),
};
export const UpdateWebhookBody = Type.Object(changes, { ...closed, minProperties: 1 });
export const UpdateGlobalWebhookBody = Type.Object(
  {
    ...changes,
    devices: Type.Optional(Type.Union([Devices, Type.Null()], { description: 'null: every device.' })),
  },
  { ...closed, minProperties: 1 },
);

export const WebhookSchema = Type.Object({
  webhookId: WebhookId,
  url: HookUrl,
  events: Events,
  secret: Secret,
  description: Type.Optional(Description),
  devices: Type.Optional(Devices),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const WebhookListSchema = Type.Object({
  items: Type.Array(WebhookSchema, {
    maxItems: MAX_WEBHOOKS_PER_DEVICE,
    description: "Oldest first; a device's hook (`PUT /hooks`) is the webhook `default`.",
  }),
});

export const GlobalDeliverySchema = Type.Object({
  ...DeliverySchema.properties,
  deviceId: Type.String({ description: 'The device whose event it delivers.' }),
});
export const GlobalDeliveryListSchema = Type.Object({
  items: Type.Array(GlobalDeliverySchema),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `cursor` for the next (older) page; null on the last page.',
  }),
});

export const DeviceWebhookParams = Type.Object({ deviceId: DeviceId, webhookId: WebhookId });
export const GlobalWebhookParams = Type.Object({ webhookId: WebhookId });
export const DeviceWebhookDeliveryParams = Type.Object({
  deviceId: DeviceId,
  webhookId: WebhookId,
  deliveryId: DeliveryId,
});
export const GlobalWebhookDeliveryParams = Type.Object({ webhookId: WebhookId, deliveryId: DeliveryId });
