/**
 * Events of a device's inbox stream (`inbox-<deviceId>`): what the network reported to it. Their data is the
 * webhook payload as it is (`message.received`, `message.edited`, `message.revoked`, `poll.vote`,
 * `presence.update`, `call.received`; docs/architecture.md, "Webhooks").
 *
 * MessageReceived is decided by the inbox decider (inbox-decider.ts), so an engine that delivers a message
 * twice records it once; its event id is derived from the device and the waMessageId (deterministicEventId,
 * inbox-commands.ts).
 */
import type { InboundMedia, PresenceState, ReceivedMessage } from '../messages/message-events.js';

export const inboxStream = (deviceId: string) => `inbox-${deviceId}`;

export interface MessageReceivedData extends ReceivedMessage {
  deviceId: string;
}

export interface MessageEditedData {
  deviceId: string;
  chatId: string;
  from: string;
  /**
   * Made by this account (on the phone or another linked device): only such a change touches its own messages.
   * Always written since schema version 2 (src/inbox/inbox-upcasters.ts); absent, the author is unknown.
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

export interface PresenceUpdatedData {
  deviceId: string;
  chatId: string;
  from: string;
  state: PresenceState;
  /** ISO 8601: when the contact was last online, when the network says (a subscribed contact going offline). */
  lastSeen?: string;
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

/** A number viewed one of this device's statuses (a read receipt of a status). */
export interface StatusViewedData {
  deviceId: string;
  waMessageId: string;
  viewer: string;
  /** Unix seconds. */
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

/** The events of `inbox-<deviceId>` besides MessageReceived: each a fact the engine (or a read command) reported. */
export type ChatEvent =
  | { type: 'MessageEdited'; data: MessageEditedData }
  | { type: 'MessageRevoked'; data: MessageRevokedData }
  | { type: 'PollVoteReceived'; data: PollVoteReceivedData }
  | { type: 'PresenceUpdated'; data: PresenceUpdatedData }
  | { type: 'CallReceived'; data: CallReceivedData }
  | { type: 'ChatRead'; data: ChatReadData }
  | { type: 'InboundMediaUpdated'; data: InboundMediaUpdatedData }
  | { type: 'StatusViewed'; data: StatusViewedData };

export const CHAT_EVENT_TYPES: ReadonlySet<string> = new Set<ChatEvent['type']>([
  'MessageEdited',
  'MessageRevoked',
  'PollVoteReceived',
  'PresenceUpdated',
  'CallReceived',
  'ChatRead',
  'InboundMediaUpdated',
  'StatusViewed',
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

/** Every event of the stream: inbound messages, and what happens to chats besides. */
export type InboxEvent = { type: 'MessageReceived'; data: MessageReceivedData } | ChatEvent;

export const INBOX_EVENT_TYPES: ReadonlySet<string> = new Set<InboxEvent['type']>([
  'MessageReceived',
  ...(CHAT_EVENT_TYPES as ReadonlySet<ChatEvent['type']>),
]);
