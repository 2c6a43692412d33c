/**
 * Message events that leave the gateway as webhooks. Their data is the webhook payload as it is:
 * `message.received` and `message.status` webhooks (docs/architecture.md, "Webhooks").
 *
 * - MessageReceived lives on `inbox-<deviceId>`, decided by the inbox decider (inbox-decider.ts), so an
 *   engine that delivers a message twice records it once; its event id is derived from the device and
 *   the waMessageId (deterministicEventId).
 * - MessageStatusChanged lives on `outbox-<deviceId>` beside the outbox's own events (src/outbox/outbox-events.ts):
 *   every status after `queued` (sent, delivered, read, played, failed, cancelled, deleted) is one.
 */
export const inboxStream = (deviceId: string) => `inbox-${deviceId}`;
export const outboxStream = (deviceId: string) => `outbox-${deviceId}`;

export const INBOUND_TYPES = ['text', 'image', 'audio', 'video', 'file', 'location', 'link', 'reaction', 'sticker', 'contact', 'unknown'] as const;
export type InboundType = (typeof INBOUND_TYPES)[number];

export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'read', 'played', 'failed', 'cancelled', 'deleted'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export interface MessageReceivedData {
  deviceId: string;
  /** Digits of the sender. */
  from: string;
  type: InboundType;
  /** Text or caption, "" when none. */
  body: string;
  /** Unix seconds. */
  timestamp: number;
  waMessageId: string;
  pushName?: string;
  media?: { mimetype: string; size?: number; filename?: string };
}

export interface MessageStatusChangedData {
  deviceId: string;
  waMessageId: string;
  status: Exclude<MessageStatus, 'queued'>;
  /** Digits of the recipient. */
  recipient: string;
  outboxId?: string;
  /** Unix seconds. */
  timestamp: number;
  error?: { code: string; message: string };
}

export type MessageEvent =
  | { type: 'MessageReceived'; data: MessageReceivedData }
  | { type: 'MessageStatusChanged'; data: MessageStatusChangedData };
