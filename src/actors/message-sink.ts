/**
 * Where a device's inbound messages, receipts and contact updates go. The default sink appends them to
 * the device's streams with deterministic event ids, so an engine that reports the same thing twice
 * (a reconnect replays, a receipt is repeated) appends it once.
 */
import type { Contact, InboundMessage, Receipt } from '../engines/engine.js';
import { deterministicEventId } from '../eventstore/event-id.js';
import type { EventStore } from '../eventstore/event-store.js';
import { type MessageEvent, type MessageReceivedData, type MessageStatusChangedData, inboxStream, outboxStream } from '../messages/message-events.js';

export interface MessageSink {
  received(deviceId: string, message: InboundMessage): Promise<void>;
  receipt(deviceId: string, receipt: Receipt): Promise<void>;
  contacts(deviceId: string, contacts: Contact[]): Promise<void>;
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
    const data: MessageReceivedData = {
      deviceId,
      from: message.from,
      type: message.type,
      body: message.body,
      timestamp: message.timestamp,
      waMessageId: message.waMessageId,
      ...(message.pushName === undefined ? {} : { pushName: message.pushName }),
      ...(message.media === undefined ? {} : { media: message.media }),
    };
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
}
