/**
 * Message events that leave the gateway as webhooks. Their data is the webhook payload as it is:
 * `message.received` and `message.status` webhooks (docs/architecture.md, "Webhooks").
 *
 * - MessageReceived lives on `inbox-<deviceId>`, decided by the inbox decider (inbox-decider.ts), so an
 *   engine that delivers a message twice records it once; its event id is derived from the device and
 *   the waMessageId (deterministicEventId).
 * - MessageStatusChanged lives on `outbox-<deviceId>` beside the outbox's own events (src/outbox/stream/outbox-events.ts):
 *   every status after `queued` (sent, delivered, read, played, failed, cancelled, deleted) is one.
 */
export const inboxStream = (deviceId: string) => `inbox-${deviceId}`;
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

export interface MessageReceivedData extends ReceivedMessage {
  deviceId: string;
}

export interface MessageEditedData {
  deviceId: string;
  chatId: string;
  from: string;
  /**
   * Made by this account (on the phone or another linked device): only such a change touches its own messages.
   * Always written since schema version 2 (src/messages/message-upcasters.ts); absent, the author is unknown.
   */
  fromMe?: boolean;
  waMessageId: string;
  body: string;
  timestamp: number;
}

export interface MessageRevokedData {
  deviceId: string;
  chatId: string;
  from: string;
  /** As MessageEditedData's. */
  fromMe?: boolean;
  waMessageId: string;
  timestamp: number;
}

export interface PollVoteReceivedData {
  deviceId: string;
  chatId: string;
  from: string;
  pollMessageId: string;
  selectedOptions: string[];
  timestamp: number;
}

export const PRESENCE_STATES = ['available', 'unavailable', 'typing', 'recording', 'paused'] as const;
export type PresenceState = (typeof PRESENCE_STATES)[number];

export interface PresenceUpdatedData {
  deviceId: string;
  chatId: string;
  from: string;
  state: PresenceState;
}

export interface CallReceivedData {
  deviceId: string;
  callId: string;
  from: string;
  isVideo: boolean;
  isGroup: boolean;
  rejected: boolean;
  /** Unix seconds. */
  timestamp: number;
}

/** Read receipts this device sent for received messages of a chat (POST /chats/:chatId/read). */
export interface ChatReadData {
  deviceId: string;
  chatId: string;
  waMessageIds: string[];
  timestamp: number;
}

/** Inbound media whose download finished after the message was recorded. */
export interface InboundMediaUpdatedData {
  deviceId: string;
  waMessageId: string;
  media: InboundMedia;
}

/** What an engine reports about chats besides messages (EngineEvents.activity), without the device id. */
export type ChatActivity =
  | ({ kind: 'edited'; id?: string } & Omit<MessageEditedData, 'deviceId'>)
  | ({ kind: 'revoked'; id?: string } & Omit<MessageRevokedData, 'deviceId'>)
  | ({ kind: 'poll_vote'; id?: string } & Omit<PollVoteReceivedData, 'deviceId'>)
  | ({ kind: 'presence' } & Omit<PresenceUpdatedData, 'deviceId'>)
  | ({ kind: 'call' } & Omit<CallReceivedData, 'deviceId'>);

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

export type MessageEvent =
  | { type: 'MessageReceived'; data: MessageReceivedData }
  | { type: 'MessageStatusChanged'; data: MessageStatusChangedData };

/** The events of `inbox-<deviceId>` besides MessageReceived: each a fact the engine (or a read command) reported. */
export type ChatEvent =
  | { type: 'MessageEdited'; data: MessageEditedData }
  | { type: 'MessageRevoked'; data: MessageRevokedData }
  | { type: 'PollVoteReceived'; data: PollVoteReceivedData }
  | { type: 'PresenceUpdated'; data: PresenceUpdatedData }
  | { type: 'CallReceived'; data: CallReceivedData }
  | { type: 'ChatRead'; data: ChatReadData }
  | { type: 'InboundMediaUpdated'; data: InboundMediaUpdatedData };

export const CHAT_EVENT_TYPES: ReadonlySet<string> = new Set<ChatEvent['type']>([
  'MessageEdited',
  'MessageRevoked',
  'PollVoteReceived',
  'PresenceUpdated',
  'CallReceived',
  'ChatRead',
  'InboundMediaUpdated',
]);

/** The event an engine's ChatActivity becomes. */
export function chatEventOf(deviceId: string, activity: ChatActivity): ChatEvent {
  switch (activity.kind) {
    case 'edited': {
      const { kind: _k, id: _i, ...rest } = activity;
      return { type: 'MessageEdited', data: { deviceId, ...rest, fromMe: rest.fromMe === true } };
    }
    case 'revoked': {
      const { kind: _k, id: _i, ...rest } = activity;
      return { type: 'MessageRevoked', data: { deviceId, ...rest, fromMe: rest.fromMe === true } };
    }
    case 'poll_vote': {
      const { kind: _k, id: _i, ...rest } = activity;
      return { type: 'PollVoteReceived', data: { deviceId, ...rest } };
    }
    case 'presence': {
      const { kind: _k, ...rest } = activity;
      return { type: 'PresenceUpdated', data: { deviceId, ...rest } };
    }
    case 'call': {
      const { kind: _k, ...rest } = activity;
      return { type: 'CallReceived', data: { deviceId, ...rest } };
    }
  }
}
