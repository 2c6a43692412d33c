/**
 * Where a device's inbound messages, receipts and contact updates go. The default sink appends them to
 * the device's streams with deterministic event ids, so an engine that reports the same thing twice
 * (a reconnect replays, a receipt is repeated) appends it once.
 */
import type { ChatActivity, Contact, InboundMessage, Receipt } from '../engines/engine.js';
import { deterministicEventId, orderedUuid } from '../eventstore/event-id.js';
import type { EventStore } from '../eventstore/event-store.js';
import {
  type MessageEvent,
  type MessageReceivedData,
  type MessageStatusChangedData,
  chatEventOf,
  inboxStream,
  outboxStream,
} from '../messages/message-events.js';

export interface MessageSink {
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
  for (const key of Object.keys(data) as Array<keyof MessageReceivedData>) if (data[key] === undefined) delete data[key];
  return data;
}

/**
 * Deterministic where the engine may report the same fact twice (the protocol message's id, the call's
 * id); presence updates are chatter and get a fresh id.
 */
export function activityEventId(deviceId: string, activity: ChatActivity): string {
  switch (activity.kind) {
    case 'edited':
      return deterministicEventId(`${deviceId}/edit/${activity.id ?? `${activity.waMessageId}/${activity.timestamp}/${activity.body}`}`);
    case 'revoked':
      return deterministicEventId(`${deviceId}/revoke/${activity.id ?? activity.waMessageId}`);
    case 'poll_vote':
      return deterministicEventId(`${deviceId}/vote/${activity.id ?? `${activity.pollMessageId}/${activity.from}/${activity.timestamp}`}`);
    case 'call':
      return deterministicEventId(`${deviceId}/call/${activity.callId}`);
    case 'presence':
      return orderedUuid();
  }
}

/** Device ids cannot contain '/', so the joined name is unambiguous. */
export const inboundEventId = (deviceId: string, waMessageId: string): string => deterministicEventId(`${deviceId}/${waMessageId}`);

export const statusEventId = (deviceId: string, waMessageId: string, status: string): string =>
  deterministicEventId(`${deviceId}/${waMessageId}/${status}`);

/** Where contact reports go: the contacts recorder (src/contacts/contacts-recorder.ts); without one they are dropped. */
export type ContactsListener = (deviceId: string, contacts: Contact[]) => void | Promise<void>;

export class StoreMessageSink implements MessageSink {
  constructor(
    private readonly store: EventStore,
    private readonly onContacts?: ContactsListener,
  ) {}

  async received(deviceId: string, message: InboundMessage): Promise<void> {
    const data = receivedDataOf(deviceId, message);
    const event: MessageEvent = { type: 'MessageReceived', data };
    await this.store.append(inboxStream(deviceId), [{ id: inboundEventId(deviceId, message.waMessageId), ...event }]);
  }

  /** `outboxId` is left out: the outbox knows which of its items a waMessageId belongs to and adds it. */
  async receipt(deviceId: string, receipt: Receipt): Promise<void> {
    const data: MessageStatusChangedData = {
      deviceId,
      waMessageId: receipt.waMessageId,
      status: receipt.status,
      recipient: receipt.recipient,
      timestamp: receipt.timestamp,
    };
    const event: MessageEvent = { type: 'MessageStatusChanged', data };
    await this.store.append(outboxStream(deviceId), [{ id: statusEventId(deviceId, receipt.waMessageId, receipt.status), ...event }]);
  }

  async contacts(deviceId: string, contacts: Contact[]): Promise<void> {
    await this.onContacts?.(deviceId, contacts);
  }

  async activity(deviceId: string, activity: ChatActivity): Promise<void> {
    await this.store.append(inboxStream(deviceId), [{ id: activityEventId(deviceId, activity), ...chatEventOf(deviceId, activity) }]);
  }
}
