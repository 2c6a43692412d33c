/**
 * What messages are made of, shared by the inbox (src/inbox), the outbox (src/outbox) and the engines: message
 * kinds and statuses, quotes, contact cards, polls, received media, a received message as the network reports it.
 *
 * MessageStatusChanged lives on `outbox-<deviceId>` beside the outbox's own events (src/outbox/stream/outbox-events.ts):
 * every status after `queued` (sent, delivered, read, played, failed, cancelled, deleted) is one; its data is the
 * `message.status` webhook payload as it is (docs/architecture.md, "Webhooks").
 */
export const outboxStream = (deviceId: string) => `outbox-${deviceId}`;

export const INBOUND_TYPES = [
  'text',
  'image',
  'audio',
  'video',
  'file',
  'location',
  'link',
  'reaction',
  'sticker',
  'contact',
  'poll',
  'unknown',
] as const;
export type InboundType = (typeof INBOUND_TYPES)[number];

export const MESSAGE_STATUSES = [
  'queued',
  'sent',
  'delivered',
  'read',
  'played',
  'failed',
  'cancelled',
  'deleted',
  'expired',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** What a reply quotes. */
export interface QuotedMessage {
  waMessageId: string;
  /** Its sender (number or `@lid` id); "" when unknown. */
  from: string;
  type: InboundType;
  body: string;
}

/** A contact card, as sent (`/send/contact`) and as received. */
export interface ContactCard {
  name: string;
  phone: string;
  organization?: string;
  email?: string;
}

export interface PollSpec {
  question: string;
  options: string[];
  multipleAnswers: boolean;
}

export const INBOUND_MEDIA_STATUSES = ['pending', 'ready', 'failed'] as const;

export interface InboundMedia {
  mimetype: string;
  size?: number;
  filename?: string;
  /** Where the bytes are served: /devices/<id>/messages/<waMessageId>/media (once downloaded). */
  url?: string;
  /** Hex SHA-256 of the bytes kept. */
  sha256?: string;
  status?: (typeof INBOUND_MEDIA_STATUSES)[number];
}

/** A received message as the network reports it: what an engine hands over and what its event records. */
export interface ReceivedMessage {
  /** The sender: digits, or `<digits>@lid` when WhatsApp hides the number and it could not be resolved. */
  from: string;
  type: InboundType;
  /** Text or caption, "" when none. */
  body: string;
  /** Unix seconds. */
  timestamp: number;
  waMessageId: string;
  pushName?: string;
  media?: InboundMedia;
  /** Set for `location` messages: the coordinates would otherwise be lost (body holds only the caption or name). */
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  /** The chat: the sender's number, a group id or an `@lid` id. Left out by events stored before chats existed: `from`. */
  chatId?: string;
  isGroup?: boolean;
  /** Sent by the account itself, from the phone or another linked device. */
  fromMe?: boolean;
  /** The sender inside a group (then also `from`). */
  participant?: string;
  quoted?: QuotedMessage;
  /** Numbers (or `@lid` ids) mentioned in the text. */
  mentions?: string[];
  contacts?: ContactCard[];
  poll?: PollSpec;
  reaction?: { messageId: string; emoji: string };
  /** A poll's message secret (base64): kept to decrypt its votes; redacted in history, left out of webhooks. */
  secret?: string;
}

export const PRESENCE_STATES = ['available', 'unavailable', 'typing', 'recording', 'paused'] as const;
export type PresenceState = (typeof PRESENCE_STATES)[number];

export interface MessageStatusChangedData {
  deviceId: string;
  waMessageId: string;
  status: Exclude<MessageStatus, 'queued'>;
  /** Digits of the recipient. */
  recipient: string;
  outboxId?: string;
  /** Unix seconds. */
  timestamp: number;
  /** `reason` for `media_unavailable`: http_status, dns_failure, connect_failed, timeout, too_large, wrong_type, refused, empty, too_many_redirects, missing_file, fetch_failed. */
  error?: { code: string; message: string; reason?: string };
}
