/**
 * Records the engine's contact reports as ContactsUpdated events (the device actor's ContactsListener),
 * so that the contacts read model is built from the log alone (docs/architecture.md, invariant 1), through the contacts
 * stream's decider (contacts-decider.ts): only entries that change what the stream knows are recorded.
 * Event ids derive from the revision decided on and the content, so an append that is tried again after
 * an unclear failure is recorded once.
 */
import { createHash } from 'node:crypto';
import type { ContactsListener, IdentitiesListener } from '../actors/message-sink.js';
import { CommandHandler } from '../commands/command-handler.js';
import type { Contact, IdentityPair } from '../engines/engine.js';
import { deterministicEventId } from '../eventstore/event-id.js';
import type { EventStore } from '../eventstore/event-store.js';
import { contactsStream } from './contact-events.js';
import { CONTACTS_PER_EVENT, contactsDecider, contactsSnapshot } from './contacts-decider.js';

/** A snapshot after this many events keeps a device's reload short however many reports it got. */
const SNAPSHOT_EVERY = 50;

export class ContactsCommands {
  private readonly commands;

  constructor(store: EventStore, onSnapshotError?: (error: unknown, streamId: string) => void) {
    this.commands = new CommandHandler({
      store,
      decider: contactsDecider,
      snapshots: { every: SNAPSHOT_EVERY, ...contactsSnapshot },
      eventIds: (events, { streamId, revision }) =>
        events.map((event, index) => {
          const content = event.type === 'ContactsUpdated' ? event.data.contacts : event.data.pairs;
          const digest = createHash('sha256').update(JSON.stringify(content)).digest('base64url');
          return deterministicEventId(
            `${streamId.slice('contacts-'.length)}/${event.type === 'ContactsUpdated' ? 'contacts' : 'identities'}/${revision}/${index * CONTACTS_PER_EVENT}/${digest}`,
          );
        }),
      ...(onSnapshotError ? { onSnapshotError } : {}),
    });
  }

  /** For the supervisor's message sink. */
  readonly listener: ContactsListener = (deviceId, contacts) => this.record(deviceId, contacts);

  readonly identitiesListener: IdentitiesListener = (deviceId, pairs) => this.recordIdentities(deviceId, pairs);

  async recordIdentities(deviceId: string, pairs: readonly IdentityPair[]): Promise<void> {
    await this.commands.handle(contactsStream(deviceId), { type: 'RecordIdentities', deviceId, pairs });
  }

  async record(deviceId: string, contacts: readonly Contact[]): Promise<void> {
    await this.commands.handle(contactsStream(deviceId), { type: 'RecordContacts', deviceId, contacts });
  }
}
