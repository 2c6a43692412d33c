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

/** A chunk of the account's history as an engine reports it (EngineEvents.history). */
export interface HistoryChunk {
  /** Deterministic: the same chunk sent again has the same id. */
  syncId: string;
  chats: Array<{ chatId: string; name?: string }>;
  messages: ReceivedMessage[];
  /** 0..100, when the engine knows it. */
  progress?: number;
  /** The last chunk of this sync. */
  final: boolean;
}

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

/**
 * `mutedUntil` of a chat: null (not muted), an ISO 8601 time, or "forever".
 */
export type MutedUntil = string | null;

/** A chat's settings changed (through the API once the network confirmed it, or on the phone): only what changed. */
export interface ChatUpdatedData {
  deviceId: string;
  chatId: string;
  archived?: boolean;
  pinned?: boolean;
  mutedUntil?: MutedUntil;
  /** Marked unread (true) or read (false) as a whole. */
  unread?: boolean;
}

/** A chat deleted for this account (`cleared: false`: it leaves the chat list) or emptied (`cleared: true`). */
export interface ChatDeletedData {
  deviceId: string;
  chatId: string;
  cleared: boolean;
}

/** A message deleted for this account only. */
export interface MessageDeletedData {
  deviceId: string;
  chatId: string;
  waMessageId: string;
}

/** A message starred or unstarred by this account. */
export interface MessageStarredData {
  deviceId: string;
  chatId: string;
  waMessageId: string;
  starred: boolean;
}

/** A message pinned in its chat until `pinnedUntil` (ISO 8601), or unpinned (null). */
export interface MessagePinnedData {
  deviceId: string;
  chatId: string;
  waMessageId: string;
  pinnedUntil: string | null;
}

/** A label of a WhatsApp Business account made, changed or deleted (on the phone, or through the API). */
export interface LabelUpdatedData {
  deviceId: string;
  labelId: string;
  name: string;
  /** WhatsApp's colour index, 0..19. */
  color: number;
  deleted: boolean;
}

/** A label put on a chat (`add`) or taken off it (`remove`). */
export interface ChatLabelChangedData {
  deviceId: string;
  chatId: string;
  labelId: string;
  action: 'add' | 'remove';
}

/**
 * A message of a history sync chunk: recorded as it was (`historical` in the read models; no `message.received`),
 * one event per message, so that each has a log position of its own like any message.
 */
export interface HistoryImportedData extends ReceivedMessage {
  deviceId: string;
  /** The chunk's deterministic id (a chunk sent again records nothing). */
  syncId: string;
  /** The chat's name as the history gave it (direct chats). */
  chatName?: string;
}

/** A history sync chunk is recorded: how much it held and how far the sync is (`history.synced`). */
export interface HistorySyncedData {
  deviceId: string;
  chats: number;
  messages: number;
  /** 0..100. */
  progress: number;
  final: boolean;
}

/** What an engine reports about chats besides messages (EngineEvents.activity), without the device id. */
export type ChatActivity =
  | ({ kind: 'edited'; id?: string } & Omit<MessageEditedData, 'deviceId'>)
  | ({ kind: 'revoked'; id?: string } & Omit<MessageRevokedData, 'deviceId'>)
  | ({ kind: 'poll_vote'; id?: string } & Omit<PollVoteReceivedData, 'deviceId'>)
  | ({ kind: 'presence' } & Omit<PresenceUpdatedData, 'deviceId'>)
  | ({ kind: 'call' } & Omit<CallReceivedData, 'deviceId'>)
  | ({ kind: 'chat_updated' } & Omit<ChatUpdatedData, 'deviceId'>)
  | ({ kind: 'chat_deleted' } & Omit<ChatDeletedData, 'deviceId'>)
  | ({ kind: 'message_deleted' } & Omit<MessageDeletedData, 'deviceId'>)
  | ({ kind: 'message_starred' } & Omit<MessageStarredData, 'deviceId'>)
  | ({ kind: 'message_pinned' } & Omit<MessagePinnedData, 'deviceId'>)
  | ({ kind: 'label_updated' } & Omit<LabelUpdatedData, 'deviceId'>)
  | ({ kind: 'chat_labels' } & Omit<ChatLabelChangedData, 'deviceId'>);

/** The events of `inbox-<deviceId>` besides MessageReceived: each a fact the engine (or a read command) reported. */
export type ChatEvent =
  | { type: 'MessageEdited'; data: MessageEditedData }
  | { type: 'MessageRevoked'; data: MessageRevokedData }
  | { type: 'PollVoteReceived'; data: PollVoteReceivedData }
  | { type: 'PresenceUpdated'; data: PresenceUpdatedData }
  | { type: 'CallReceived'; data: CallReceivedData }
  | { type: 'ChatRead'; data: ChatReadData }
  | { type: 'InboundMediaUpdated'; data: InboundMediaUpdatedData }
  | { type: 'ChatUpdated'; data: ChatUpdatedData }
  | { type: 'ChatDeleted'; data: ChatDeletedData }
  | { type: 'MessageDeleted'; data: MessageDeletedData }
  | { type: 'MessageStarred'; data: MessageStarredData }
  | { type: 'MessagePinned'; data: MessagePinnedData }
  | { type: 'LabelUpdated'; data: LabelUpdatedData }
  | { type: 'ChatLabelChanged'; data: ChatLabelChangedData }
  | { type: 'HistoryImported'; data: HistoryImportedData }
  | { type: 'HistorySynced'; data: HistorySyncedData }
  | { type: 'StatusViewed'; data: StatusViewedData };

export const CHAT_EVENT_TYPES: ReadonlySet<string> = new Set<ChatEvent['type']>([
  'MessageEdited',
  'MessageRevoked',
  'PollVoteReceived',
  'PresenceUpdated',
  'CallReceived',
  'ChatRead',
  'InboundMediaUpdated',
  'ChatUpdated',
  'ChatDeleted',
  'MessageDeleted',
  'MessageStarred',
  'MessagePinned',
  'LabelUpdated',
  'ChatLabelChanged',
  'HistoryImported',
  'HistorySynced',
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
    case 'chat_updated': {
      const { kind: _k, ...rest } = activity;
      return { type: 'ChatUpdated', data: { deviceId, ...rest } };
    }
    case 'chat_deleted': {
      const { kind: _k, ...rest } = activity;
      return { type: 'ChatDeleted', data: { deviceId, ...rest } };
    }
    case 'message_deleted': {
      const { kind: _k, ...rest } = activity;
      return { type: 'MessageDeleted', data: { deviceId, ...rest } };
    }
    case 'message_starred': {
      const { kind: _k, ...rest } = activity;
      return { type: 'MessageStarred', data: { deviceId, ...rest } };
    }
    case 'message_pinned': {
      const { kind: _k, ...rest } = activity;
      return { type: 'MessagePinned', data: { deviceId, ...rest } };
    }
    case 'label_updated': {
      const { kind: _k, ...rest } = activity;
      return { type: 'LabelUpdated', data: { deviceId, ...rest } };
    }
    case 'chat_labels': {
      const { kind: _k, ...rest } = activity;
      return { type: 'ChatLabelChanged', data: { deviceId, ...rest } };
    }
  }
}

/** Every event of the stream: inbound messages, and what happens to chats besides. */
export type InboxEvent = { type: 'MessageReceived'; data: MessageReceivedData } | ChatEvent;

export const INBOX_EVENT_TYPES: ReadonlySet<string> = new Set<InboxEvent['type']>([
  'MessageReceived',
  ...(CHAT_EVENT_TYPES as ReadonlySet<ChatEvent['type']>),
]);
