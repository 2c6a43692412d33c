/**
 * The decider of a device's inbox stream (`inbox-<deviceId>`), written through one command handler
 * (inbox-commands.ts). WhatsApp delivers a message again when it was not acknowledged, so the same waMessageId
 * can be reported twice: the state is the latest waMessageIds, and a message already among them is decided
 * into nothing, whatever the store's deduplication by event id keeps (EventStoreDB forgets it on a restart).
 */
import type { Decider } from '../commands/decider.js';
import type { ChatEvent, InboxEvent, MessageReceivedData } from './inbox-events.js';

/**
 * Redeliveries are of recent messages (those not acknowledged yet): a few hundred covers a reconnect's
 * backlog, and keeps each device's state small enough to stay in memory.
 */
export const REMEMBERED_INBOUND = 500;

/** The state is only the received messages: chat activity is passed over when the stream is read. */
const DECIDED_EVENT_TYPES: ReadonlySet<string> = new Set<InboxEvent['type']>(['MessageReceived']);

export interface InboxState {
  /** waMessageIds of the latest messages, oldest first, at most REMEMBERED_INBOUND. */
  recent: readonly string[];
}

export type InboxCommand =
  | { type: 'RecordInbound'; message: MessageReceivedData }
  /** Recorded as it comes: its deterministic event id (inbox-commands.ts) drops a repeat. */
  | { type: 'RecordActivity'; event: ChatEvent }
  /** Several at once (a part of a history chunk), in one append; their deterministic ids drop a repeat. */
  | { type: 'RecordActivities'; events: ChatEvent[] };

export const inboxDecider: Decider<InboxState, InboxCommand, InboxEvent> = {
  eventTypes: DECIDED_EVENT_TYPES,

  initialState: () => ({ recent: [] }),

  evolve(state, event) {
    if (event.type !== 'MessageReceived') return state;
    const recent = [...state.recent, event.data.waMessageId];
    return { recent: recent.length > REMEMBERED_INBOUND ? recent.slice(-REMEMBERED_INBOUND) : recent };
  },

  decide(command, state) {
    if (command.type === 'RecordActivity') return [command.event];
    if (command.type === 'RecordActivities') return command.events;
    if (state.recent.includes(command.message.waMessageId)) return [];
    return [{ type: 'MessageReceived', data: command.message }];
  },
};

/** Snapshots hold the state as it is (a list of ids). */
export const inboxSnapshot = {
  toJson: (state: InboxState): unknown => state.recent,
  fromJson: (json: unknown): InboxState => ({ recent: Array.isArray(json) ? (json as string[]) : [] }),
};
