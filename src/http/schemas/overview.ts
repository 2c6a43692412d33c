import Type from 'typebox';
import { Cursor, DeviceId, Limit, SessionState, Timestamp } from './common.js';

export const OverviewQuery = Type.Object(
  { limit: Type.Optional(Limit(500, 100)), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

const Activity = Type.Object({
  sent: Type.Integer({ minimum: 0, description: 'Messages recorded `sent` today.' }),
  received: Type.Integer({ minimum: 0, description: 'Inbound messages recorded today.' }),
  failed: Type.Integer({ minimum: 0, description: 'Messages recorded `failed` today.' }),
});

const WebhookLag = Type.Object(
  {
    pending: Type.Integer({ minimum: 0, description: 'Webhook deliveries waiting: not yet delivered, or retrying.' }),
    oldestPendingAt: Type.Union([Timestamp, Type.Null()], {
      description:
        'When the event of the oldest waiting delivery happened (how far the receivers are behind); null: none.',
    }),
  },
  { description: "Webhook lag: what the device's webhooks (global ones included) have yet to deliver." },
);

export const OverviewSchema = Type.Object({
  day: Type.String({
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
    description: 'Today, in UTC: the day counted.',
    examples: ['2026-11-27'],
  }),
  generatedAt: Timestamp,
  devices: Type.Object({
    total: Type.Integer({ minimum: 0 }),
    byState: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'How many devices are in each session state.',
    }),
  }),
  today: Activity,
  outboxDepth: Type.Integer({ minimum: 0, description: 'Messages queued or being sent, over every device.' }),
  webhooks: WebhookLag,
  items: Type.Array(
    Type.Object({
      id: DeviceId,
      name: Type.String(),
      state: SessionState,
      today: Activity,
      outboxDepth: Type.Integer({ minimum: 0 }),
      webhooks: WebhookLag,
    }),
    { description: 'A page of devices, ordered by id.' },
  ),
  nextCursor: Type.Union([Type.String(), Type.Null()], {
    description: 'Pass as `cursor` for the next page of devices; null on the last page.',
  }),
});
