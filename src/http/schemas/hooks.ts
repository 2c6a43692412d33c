import Type from 'typebox';
import { WEBHOOK_EVENT_KINDS } from '../../webhooks/envelope.js';
import { DELIVERY_STATUSES } from '../../webhooks/webhooks-read-model.js';
import { Cursor, DeviceId, Limit, Timestamp } from './common.js';

export const HOOK_URL_MAX_LENGTH = 2048;

export const EventKind = Type.Enum(WEBHOOK_EVENT_KINDS, { description: 'Webhook event kind.' });
export const HookUrl = Type.String({
  format: 'uri',
  minLength: 1,
  maxLength: HOOK_URL_MAX_LENGTH,
  description:
    'Absolute http or https URL of the receiver. Addresses in loopback, private, link-local or metadata ranges are refused unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true. ' +
    'Credentials in it (`user:password@`, query parameters such as `token`, `api_key`, `sig`) are sent to the receiver but shown as `***` in answers and history (encrypted at rest with ENCRYPTION_KEY); ' +
    'the URL sent back exactly as answers show it keeps the stored one, `***` credentials in any other URL are refused.',
});
export const Events = Type.Array(
  Type.Union([EventKind, Type.Literal('*', { description: 'Every kind, present and future.' })]),
  {
    minItems: 1,
    uniqueItems: true,
    description: 'Kinds to send: non-empty, no duplicates; `"*"` selects every kind, present and future.',
  },
);
export const DeliveryId = Type.String({
  format: 'uuid',
  description: 'Delivery id: the envelope `id` and `webhook-id` header.',
});

export const PutHooksBody = Type.Object(
  {
    url: HookUrl,
    events: Events,
    rotateSecret: Type.Optional(
      Type.Boolean({ description: 'Make a new signing secret; the old one stops being used at once.' }),
    ),
  },
  { additionalProperties: false },
);

export const HooksSchema = Type.Object({
  url: HookUrl,
  events: Events,
  secret: Type.String({
    pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
    description:
      'Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. Made on the first PUT, kept until rotated or the configuration is deleted.',
  }),
  updatedAt: Timestamp,
});

export const TestResultSchema = Type.Object({
  delivered: Type.Boolean({ description: 'The receiver answered 2xx within the timeout.' }),
  status: Type.Optional(Type.Integer({ description: 'HTTP status of the answer, when there was one.' })),
  durationMs: Type.Number({ minimum: 0 }),
  error: Type.Optional(
    Type.String({
      description:
        'Why it was not delivered: `answered <status>`, or `unreachable` when no answer came (the cause is in the gateway log).',
    }),
  ),
});

export const DeliveryStatusSchema = Type.Enum(DELIVERY_STATUSES, {
  description:
    '`pending` (waiting for its first or next attempt), `delivered` or `failed` (no attempts left, 410 Gone, or the hook was removed).',
});

export const DeliverySchema = Type.Object({
  id: DeliveryId,
  event: EventKind,
  status: DeliveryStatusSchema,
  attempts: Type.Integer({ minimum: 0 }),
  lastStatus: Type.Optional(Type.Integer({ description: 'HTTP status of the last answer.' })),
  lastError: Type.Optional(
    Type.String({
      description:
        'Why the last attempt failed (`answered <status>`, `unreachable` when no answer came), or why the delivery ended.',
    }),
  ),
  lastErrorDetail: Type.Optional(
    Type.String({
      description: 'Admin key only: why the receiver was unreachable (host not found, connection refused, timed out…).',
    }),
  ),
  lastAttemptAt: Type.Optional(Timestamp),
  lastDurationMs: Type.Optional(Type.Integer({ minimum: 0 })),
  nextAttemptAt: Type.Optional(Timestamp),
  createdAt: Timestamp,
});

export const ListDeliveriesQuery = Type.Object({
  status: Type.Optional(DeliveryStatusSchema),
  limit: Type.Optional(Limit(500, 50)),
  cursor: Type.Optional(Cursor),
});

export const DeliveryListSchema = Type.Object({
  items: Type.Array(DeliverySchema),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `cursor` for the next (older) page; null on the last page.',
  }),
});

export const DeliveryParams = Type.Object({ deviceId: DeviceId, deliveryId: DeliveryId });
