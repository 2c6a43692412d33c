/**
 * Where a device's inbound messages, receipts and contact updates go. The default sink records inbound
 * messages through the inbox's decider (src/messages/inbox-decider.ts) with expected revisions, so an
 * engine that reports the same message twice (a reconnect replays it) records it once even when the
 * store has forgotten the event id; receipts and contacts go to their streams' own writers (receipts to the
 * outbox's, so that `outbox-<deviceId>` has one writer).
 */
import type { ChatActivity, Contact, InboundMessage, Receipt } from '../engines/engine.js';
import { deterministicEventId, orderedUuid } from '../eventstore/event-id.js';
import type { EventStore } from '../eventstore/event-store.js';
import { CommandHandler } from '../commands/command-handler.js';
import {
  type InboxCommand,
  type InboxEvent,
  type InboxState,
  type InboxWriter,
  inboxDecider,
  inboxSnapshot,
} from '../messages/inbox-decider.js';
import { type ChatEvent, type MessageReceivedData, chatEventOf, inboxStream } from '../messages/message-events.js';

export interface MessageSink {
  /**
   * A message has arrived and waits its turn in the device's spool (which calls `received` one message at a
   * time, in arrival order): slow work for it (downloading its media) may start now, so that the messages
   * behind it do not wait for it in turn.
   */
  arriving?(deviceId: string, message: InboundMessage): void;
  /**
   * The spool gave up a message `arriving` announced, which is then never recorded: refused to the sender
   * waiting for it (the sandbox), given up after failures retrying cannot fix, or held when the spool closed.
   * What arriving() began for it is undone (its downloaded media removed).
   */
  abandoned?(deviceId: string, message: InboundMessage): void;
  received(deviceId: string, message: InboundMessage): Promise<void>;
  receipt(deviceId: string, receipt: Receipt): Promise<void>;
  contacts(deviceId: string, contacts: Contact[]): Promise<void>;
  /** Edits, revokes, poll votes, presence and calls (appended to `inbox-<deviceId>`). */
  activity?(deviceId: string, activity: ChatActivity): Promise<void>;
}

/** The recorded form of an inbound message: every field the engine reported, none of its callbacks. */
export function receivedDataOf(deviceId: string, message: InboundMessage): MessageReceivedData {
  const { downloadMedia: _download, ...fields } = message;
  const data: MessageReceivedData = { deviceId, ...fields };
  for (const key of Object.keys(data) as Array<keyof MessageReceivedData>)
    if (data[key] === undefined) delete data[key];
  return data;
}

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
    case 'presence':
      return orderedUuid();
  }
}

/** Device ids cannot contain '/', so the joined name is unambiguous. */
export const inboundEventId = (deviceId: string, waMessageId: string): string =>
  deterministicEventId(`${deviceId}/${waMessageId}`);

/**
 * Where receipts go: the outbox's receipt writer (src/outbox/commands/outbox-receipts.ts), which records them on
 * `outbox-<deviceId>` through that stream's one writer, with the message's outboxId when the outbox sent it.
 */
export interface ReceiptRecorder {
  record(deviceId: string, receipt: Receipt): Promise<void>;
}

/** Where contact reports go: the contacts recorder (src/contacts/contacts-recorder.ts); without one they are dropped. */
export type ContactsListener = (deviceId: string, contacts: Contact[]) => void | Promise<void>;

/** Devices whose inbox state stays in memory: their next message reads only the stream's tail. */
const INBOX_STATES_KEPT = 1_000;
/** A snapshot per this many messages bounds the read of an inbox that is not in memory. */
const INBOX_SNAPSHOT_EVERY = 200;

export class StoreMessageSink implements MessageSink, InboxWriter {
  /** The inbox stream's one writer in this process. */
  private readonly inbox: CommandHandler<InboxState, InboxCommand, InboxEvent>;
  /** The deterministic id of each activity event being recorded (decide hands the command's event back). */
  private readonly activityIds = new WeakMap<object, string>();

  constructor(
    store: EventStore,
    private readonly receipts: ReceiptRecorder,
    private readonly onContacts?: ContactsListener,
  ) {
    this.inbox = new CommandHandler({
      store,
      decider: inboxDecider,
      cacheSize: INBOX_STATES_KEPT,
      snapshots: { every: INBOX_SNAPSHOT_EVERY, ...inboxSnapshot },
      // The same deterministic ids as ever: stores that still know them drop a repeat as well.
      eventIds: (events) =>
        events.map((event) =>
          event.type === 'MessageReceived'
            ? inboundEventId(event.data.deviceId, event.data.waMessageId)
            : this.activityIds.get(event),
        ),
    });
  }

  async received(deviceId: string, message: InboundMessage): Promise<void> {
    await this.inbox.handle(inboxStream(deviceId), {
      type: 'RecordInbound',
      message: receivedDataOf(deviceId, message),
    });
  }

  async receipt(deviceId: string, receipt: Receipt): Promise<void> {
    await this.receipts.record(deviceId, receipt);
  }

  async contacts(deviceId: string, contacts: Contact[]): Promise<void> {
    await this.onContacts?.(deviceId, contacts);
  }

  async activity(deviceId: string, activity: ChatActivity): Promise<void> {
    await this.record(deviceId, chatEventOf(deviceId, activity), activityEventId(deviceId, activity));
  }

  async record(deviceId: string, event: ChatEvent, eventId: string): Promise<number> {
    this.activityIds.set(event, eventId);
    return (await this.inbox.handle(inboxStream(deviceId), { type: 'RecordActivity', event })).position;
  }
}
