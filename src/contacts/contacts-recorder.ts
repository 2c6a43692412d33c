/**
 * Records the engine's contact reports as ContactsUpdated events (the device actor's ContactsListener),
 * so that the contacts read model is built from the log alone (invariant 1).
 *
 * WhatsApp repeats itself: every reconnect re-sends the whole contact list. Only entries that would
 * change the read model are recorded, and a report that changes nothing appends nothing. Reports of one
 * device are recorded one after the other, each compared with the read model once it includes the
 * device's previous contact event. The append names the revision it was decided on (one writer per
 * stream, invariant 3) and its event ids derive from that revision and the content, so an append that
 * is retried after an unclear failure is recorded once.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ContactsListener } from '../actors/message-sink.js';
import type { Contact } from '../engines/engine.js';
import { deterministicEventId } from '../eventstore/event-id.js';
import { type EventStore, type NewEvent, WrongExpectedRevisionError } from '../eventstore/event-store.js';
import { type ContactEvent, contactsStream } from './contact-events.js';
import { isNumber } from './contact-text.js';
import type { ContactView } from './contacts-read-model.js';

/** Contacts per event: a first sync can report thousands, and events stay small. */
const CONTACTS_PER_EVENT = 500;
/** A rejected append (another writer got in first) is decided again on the newer state, this often. */
const ATTEMPTS = 3;

export interface ContactsRecorderDeps {
  store: EventStore;
  /** The read models' progress (the ProjectionRunner). */
  projections: { waitFor(position: number): Promise<void> };
  /** The contacts read model as it is now. */
  contacts: { get(deviceId: string, number: string): ContactView | undefined };
  log: Logger;
}

export class ContactsRecorder {
  /** The report being recorded per device; the next one waits for it. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(private readonly deps: ContactsRecorderDeps) {}

  /** For the supervisor's message sink. */
  readonly listener: ContactsListener = (deviceId, contacts) => this.record(deviceId, contacts);

  record(deviceId: string, contacts: readonly Contact[]): Promise<void> {
    const previous = this.queues.get(deviceId) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(() => this.write(deviceId, contacts));
    this.queues.set(deviceId, current);
    const forget = () => {
      if (this.queues.get(deviceId) === current) this.queues.delete(deviceId);
    };
    current.then(forget, forget);
    return current;
  }

  private async write(deviceId: string, contacts: readonly Contact[]): Promise<void> {
    const stream = contactsStream(deviceId);
    for (let attempt = 1; ; attempt++) {
      const [last] = await this.deps.store.readStream(stream, { direction: 'backwards', maxCount: 1 });
      if (last) await this.deps.projections.waitFor(last.position);
      const changes = contactChanges(contacts, (number) => this.deps.contacts.get(deviceId, number));
      if (changes.length === 0) return;
      const revision = last?.revision ?? -1;
      try {
        await this.deps.store.append(stream, eventsOf(deviceId, revision, changes), { expectedRevision: last ? last.revision : 'no_stream' });
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || attempt >= ATTEMPTS) throw error;
        this.deps.log.warn({ deviceId, attempt }, 'contacts stream moved under a report; deciding it again');
      }
    }
  }
}

function eventsOf(deviceId: string, revision: number, changes: readonly Contact[]): NewEvent[] {
  const events: NewEvent[] = [];
  for (let start = 0; start < changes.length; start += CONTACTS_PER_EVENT) {
    const contacts = changes.slice(start, start + CONTACTS_PER_EVENT);
    const digest = createHash('sha256').update(JSON.stringify(contacts)).digest('base64url');
    const event: ContactEvent = { type: 'ContactsUpdated', data: { deviceId, contacts } };
    events.push({ id: deterministicEventId(`${deviceId}/contacts/${revision}/${start}/${digest}`), ...event });
  }
  return events;
}

/**
 * The entries of a report that would change the read model, one per number (a later entry's fields
 * win; an absent or empty name keeps the one before).
 */
export function contactChanges(contacts: readonly Contact[], known: (number: string) => ContactView | undefined): Contact[] {
  const merged = new Map<string, Contact>();
  for (const contact of contacts) {
    if (!isNumber(contact.number)) continue;
    const before = merged.get(contact.number);
    const name = contact.name || before?.name;
    const pushName = contact.pushName || before?.pushName;
    merged.set(contact.number, { number: contact.number, jid: contact.jid, ...(name ? { name } : {}), ...(pushName ? { pushName } : {}) });
  }
  return [...merged.values()].filter((contact) => {
    const current = known(contact.number);
    return (
      current === undefined ||
      current.jid !== contact.jid ||
      (contact.name !== undefined && contact.name !== current.name) ||
      (contact.pushName !== undefined && contact.pushName !== current.pushName)
    );
  });
}
