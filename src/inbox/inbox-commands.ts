/**
 * The inbox stream's one writer (docs/architecture.md, invariant 3): what the engine reports (through the
 * device actors' message sink, src/actors/message-sink.ts) and the chat events the gateway records itself (a
 * read receipt it sends, a media download that finished late) go through one command handler, with expected
 * revisions, so an engine that reports the same message twice (a reconnect replays it) records it once even
 * when the store has forgotten the event id.
 */
import { CommandHandler } from '../commands/command-handler.js';
import { deterministicEventId, groupedEventIds, orderedUuid } from '../eventstore/event-id.js';
import type { EventStore } from '../eventstore/event-store.js';
import { type InboxCommand, type InboxState, inboxDecider, inboxSnapshot } from './inbox-decider.js';
import {
  type ChatActivity,
  type ChatEvent,
  type HistoryChunk,
  type InboxEvent,
  type MessageReceivedData,
  chatEventOf,
  inboxStream,
} from './inbox-events.js';

/**
 * Deterministic where the engine may report the same fact twice (the protocol message's id, the call's
 * id); presence updates are chatter and get a fresh id.
 */
export function activityEventId(deviceId: string, activity: ChatActivity): string {
  switch (activity.kind) {
    case 'edited':
      return deterministicEventId(
        `${deviceId}/edit/${activity.id ?? `${activity.waMessageId}/${activity.timestamp}/${activity.body}`}`,
      );
    case 'revoked':
      return deterministicEventId(`${deviceId}/revoke/${activity.id ?? activity.waMessageId}`);
    case 'poll_vote':
      return deterministicEventId(
        `${deviceId}/vote/${activity.id ?? `${activity.pollMessageId}/${activity.from}/${activity.timestamp}`}`,
      );
    case 'call':
      return deterministicEventId(`${deviceId}/call/${activity.callId}`);
    // Chat settings may change back and forth: each report is a fact of its own.
    case 'presence':
    case 'chat_updated':
    case 'chat_deleted':
    case 'message_starred':
    case 'message_pinned':
    case 'label_updated':
    case 'chat_labels':
      return orderedUuid();
    case 'message_deleted':
      return deterministicEventId(`${deviceId}/delete-for-me/${activity.waMessageId}`);
  }
}

/** Device ids cannot contain '/', so the joined name is unambiguous. */
export const inboundEventId = (deviceId: string, waMessageId: string): string =>
  deterministicEventId(`${deviceId}/${waMessageId}`);

/**
 * History is recorded in parts of at most this many messages: bounded events, bounded memory per append, and a live
 * message waits for one part at most. Each part is one append and one flush to disk, so parts are not small.
 */
export const HISTORY_PART = 1_000;

/** Devices whose inbox state stays in memory: their next message reads only the stream's tail. */
const INBOX_STATES_KEPT = 1_000;
/** A snapshot per this many messages bounds the read of an inbox that is not in memory. */
const INBOX_SNAPSHOT_EVERY = 200;

export class InboxCommands {
  private readonly handler: CommandHandler<InboxState, InboxCommand, InboxEvent>;
  /** The deterministic id of each activity event being recorded (decide hands the command's event back). */
  private readonly activityIds = new WeakMap<object, string>();

  constructor(store: EventStore) {
    this.handler = new CommandHandler({
      store,
      decider: inboxDecider,
      cacheSize: INBOX_STATES_KEPT,
      // In the background: every history part crosses INBOX_SNAPSHOT_EVERY, and waiting for its flush too doubled them.
      snapshots: { every: INBOX_SNAPSHOT_EVERY, background: true, ...inboxSnapshot },
      // The same deterministic ids as ever: stores that still know them drop a repeat as well.
      eventIds: (events) =>
        events.map((event) =>
          event.type === 'MessageReceived'
            ? inboundEventId(event.data.deviceId, event.data.waMessageId)
            : this.activityIds.get(event),
        ),
    });
  }

  /** An inbound message, recorded once however often the engine reports it. */
  async receive(deviceId: string, message: MessageReceivedData): Promise<void> {
    await this.handler.handle(inboxStream(deviceId), { type: 'RecordInbound', message });
  }

  /** What the engine reported about a chat besides a message (an edit, a revoke, a vote, presence, a call). */
  async activity(deviceId: string, activity: ChatActivity): Promise<void> {
    await this.record(deviceId, chatEventOf(deviceId, activity), activityEventId(deviceId, activity));
  }

  /**
   * A chunk of history, in parts of HISTORY_PART messages oldest first, its `history.synced` appended with the last
   * part; every event id is derived from the chunk's id, so a chunk reported again records nothing. Resolves when
   * all of it is durable.
   */
  async history(deviceId: string, chunk: HistoryChunk): Promise<number> {
    const names = new Map(chunk.chats.flatMap((c) => (c.name ? [[c.chatId, c.name] as const] : [])));
    const messages = [...chunk.messages].sort((a, b) => a.timestamp - b.timestamp);
    const stream = inboxStream(deviceId);
    // The chunk's ids share their first half: its appends touch a few pages of the store's id index, not one each.
    const idOf = groupedEventIds(`${deviceId}/history/${chunk.syncId}`);
    const synced: ChatEvent = {
      type: 'HistorySynced',
      data: {
        deviceId,
        chats: chunk.chats.length,
        messages: messages.length,
        progress: Math.max(0, Math.min(100, Math.round(chunk.progress ?? (chunk.final ? 100 : 0)))),
        final: chunk.final,
      },
    };
    this.activityIds.set(synced, idOf('synced'));
    let position = 0;
    for (let start = 0; start === 0 || start < messages.length; start += HISTORY_PART) {
      const events = messages.slice(start, start + HISTORY_PART).map((message): ChatEvent => {
        const name = names.get(message.chatId ?? message.from);
        const event: ChatEvent = {
          type: 'HistoryImported',
          data: { deviceId, syncId: chunk.syncId, ...message, ...(name !== undefined ? { chatName: name } : {}) },
        };
        this.activityIds.set(event, idOf(`message/${message.waMessageId}`));
        return event;
      });
      // The last part carries the chunk's `history.synced`: one flush to disk less per chunk.
      if (start + HISTORY_PART >= messages.length) events.push(synced);
      position = (await this.handler.handle(stream, { type: 'RecordActivities', events })).position || position;
    }
    return position;
  }

  /**
   * A chat event the gateway decided itself. `eventId` is deterministic, so a retried command is dropped;
   * answers the append's position (0 when nothing was appended).
   */
  async record(deviceId: string, event: ChatEvent, eventId: string): Promise<number> {
    this.activityIds.set(event, eventId);
    return (await this.handler.handle(inboxStream(deviceId), { type: 'RecordActivity', event })).position;
  }
}
