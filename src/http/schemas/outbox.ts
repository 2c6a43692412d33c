import Type from 'typebox';
import { SEND_KINDS } from '../../outbox/stream/outbox-events.js';
import { Cursor, DeviceId, Limit, Timestamp } from './common.js';

export const ListOutboxQuery = Type.Object(
  { limit: Type.Optional(Limit(500, 50)), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);

/** How much of a message's text an outbox item shows. */
export const PREVIEW_LENGTH = 200;

export const OutboxItemSchema = Type.Object({
  outboxId: Type.String(),
  waMessageId: Type.String(),
  kind: Type.Enum(SEND_KINDS),
  to: Type.String(),
  status: Type.Enum(['queued', 'sending']),
  attempts: Type.Integer({ minimum: 0, description: 'Tries started so far.' }),
  createdAt: Timestamp,
  expiresAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description: "Not sent by then, the message is `expired` (the send's `expiresAt`, or OUTBOX_MESSAGE_TTL).",
    }),
  ),
  lastError: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  text: Type.Optional(
    Type.String({
      maxLength: PREVIEW_LENGTH,
      description: `The message's text (a caption, a file name, a poll's question…), its first ${PREVIEW_LENGTH} characters.`,
    }),
  ),
  deferredUntil: Type.Optional(
    Type.String({
      format: 'date-time',
      description: "Pacing holds it (the day's cap, quiet hours): it stays queued and goes from then on, in order.",
    }),
  ),
});

export const OutboxListSchema = Type.Object({
  items: Type.Array(OutboxItemSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export const RemovedSchema = Type.Object({ removed: Type.Integer({ minimum: 0 }) });

export const OutboxItemParams = Type.Object({
  deviceId: DeviceId,
  outboxId: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' }),
});
