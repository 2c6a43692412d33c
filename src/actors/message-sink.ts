/**
 * Where a device's inbound messages, receipts and contact updates go. The default sink hands inbound
 * messages and chat activity to the inbox stream's one writer (src/inbox/inbox-commands.ts); receipts and
 * contacts go to their streams' own writers in the gateway.
 */
import type { ChatActivity, Contact, InboundMessage, Receipt } from '../engines/engine.js';
import { deterministicEventId } from '../eventstore/event-id.js';
import type { EventStore } from '../eventstore/event-store.js';
import { InboxCommands } from '../inbox/inbox-commands.js';
import type { MessageReceivedData } from '../inbox/inbox-events.js';
import { type MessageStatusChangedData, outboxStream } from '../messages/message-events.js';

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

export const statusEventId = (deviceId: string, waMessageId: string, status: string): string =>
  deterministicEventId(`${deviceId}/${waMessageId}/${status}`);

/** Where contact reports go: the contacts recorder (src/contacts/contacts-recorder.ts); without one they are dropped. */
export type ContactsListener = (deviceId: string, contacts: Contact[]) => void | Promise<void>;

export class StoreMessageSink implements MessageSink {
  constructor(
    private readonly store: EventStore,
    private readonly onContacts?: ContactsListener,
    /** The inbox stream's one writer in this process (the gateway shares it with what it records itself). */
    private readonly inbox = new InboxCommands(store),
  ) {}

  async received(deviceId: string, message: InboundMessage): Promise<void> {
    await this.inbox.receive(deviceId, receivedDataOf(deviceId, message));
  }

  /** `outboxId` is left out: the outbox knows which of its items a waMessageId belongs to and adds it. */
  async receipt(deviceId: string, receipt: Receipt): Promise<void> {
    const data: MessageStatusChangedData = {
      deviceId,
      waMessageId: receipt.waMessageId,
      status: receipt.status,
      recipient: receipt.recipient,
      timestamp: receipt.timestamp,
      ...(receipt.error ? { error: receipt.error } : {}),
    };
    const event = { type: 'MessageStatusChanged', data };
    await this.store.append(outboxStream(deviceId), [
      { id: statusEventId(deviceId, receipt.waMessageId, receipt.status), ...event },
    ]);
  }

  async contacts(deviceId: string, contacts: Contact[]): Promise<void> {
    await this.onContacts?.(deviceId, contacts);
  }

  async activity(deviceId: string, activity: ChatActivity): Promise<void> {
    await this.inbox.activity(deviceId, activity);
  }
}
