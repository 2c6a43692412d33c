/**
 * Where a device's inbound messages, receipts and contact updates go. The default sink hands inbound
 * messages and chat activity to the inbox stream's one writer (src/inbox/inbox-commands.ts); receipts go to the
 * outbox's receipt writer (so that `outbox-<deviceId>` has one writer), contacts to the contacts writer (ContactsCommands).
 */
import type { ChatActivity, Contact, HistoryChunk, IdentityPair, InboundMessage, Receipt } from '../engines/engine.js';
import type { EventStore } from '../eventstore/event-store.js';
import { InboxCommands } from '../inbox/inbox-commands.js';
import type { MessageReceivedData } from '../inbox/inbox-events.js';

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
  /** LID ↔ number pairs (recorded on `contacts-<deviceId>` by the contacts recorder). */
  identities?(deviceId: string, pairs: IdentityPair[]): Promise<void>;
  /** Edits, revokes, poll votes, presence and calls (appended to `inbox-<deviceId>`). */
  activity?(deviceId: string, activity: ChatActivity): Promise<void>;
  /** A chunk of the account's history (appended to `inbox-<deviceId>`, in parts). */
  history?(deviceId: string, chunk: HistoryChunk): Promise<void>;
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
 * Where receipts go: the outbox's receipt writer (src/outbox/commands/outbox-receipts.ts), which records them on
 * `outbox-<deviceId>` through that stream's one writer, with the message's outboxId when the outbox sent it.
 */
export interface ReceiptRecorder {
  record(deviceId: string, receipt: Receipt): Promise<void>;
}

/** Where contact reports go: the contacts writer (src/contacts/contacts-commands.ts); without one they are dropped. */
export type ContactsListener = (deviceId: string, contacts: Contact[]) => void | Promise<void>;

/** Where LID ↔ number pairs go: the contacts recorder too; without one they are dropped. */
export type IdentitiesListener = (deviceId: string, pairs: IdentityPair[]) => void | Promise<void>;

export class StoreMessageSink implements MessageSink {
  constructor(
    store: EventStore,
    private readonly receipts: ReceiptRecorder,
    private readonly onContacts?: ContactsListener,
    /** The inbox stream's one writer in this process (the gateway shares it with what it records itself). */
    private readonly inbox = new InboxCommands(store),
    private readonly onIdentities?: IdentitiesListener,
  ) {}

  async received(deviceId: string, message: InboundMessage): Promise<void> {
    await this.inbox.receive(deviceId, receivedDataOf(deviceId, message));
  }

  async receipt(deviceId: string, receipt: Receipt): Promise<void> {
    await this.receipts.record(deviceId, receipt);
  }

  async contacts(deviceId: string, contacts: Contact[]): Promise<void> {
    await this.onContacts?.(deviceId, contacts);
  }

  async identities(deviceId: string, pairs: IdentityPair[]): Promise<void> {
    await this.onIdentities?.(deviceId, pairs);
  }

  async activity(deviceId: string, activity: ChatActivity): Promise<void> {
    await this.inbox.activity(deviceId, activity);
  }

  async history(deviceId: string, chunk: HistoryChunk): Promise<void> {
    await this.inbox.history(deviceId, chunk);
  }
}
