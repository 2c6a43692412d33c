/**
 * The decider of a device's contacts stream (`contacts-<deviceId>`). WhatsApp repeats itself: every
 * reconnect re-sends the whole contact list. The state is what the stream has recorded per number, and a
 * report is decided into the entries that change it (none: nothing is appended).
 */
import type { Decider } from '../commands/decider.js';
import type { Contact, IdentityPair } from '../engines/engine.js';
import { CONTACT_EVENT_TYPES, type ContactEvent } from './contact-events.js';
import { isLid, isNumber } from './contact-text.js';

/** Contacts per event: a first sync can report thousands, and events stay small. */
export const CONTACTS_PER_EVENT = 500;

export type RecordedContact = Omit<Contact, 'number'>;

export interface ContactsState {
  byNumber: ReadonlyMap<string, RecordedContact>;
  /** The LID paired with each number (IdentitiesLearned). */
  lidByNumber: ReadonlyMap<string, string>;
}

export type ContactsCommand =
  | { type: 'RecordContacts'; deviceId: string; contacts: readonly Contact[] }
  | { type: 'RecordIdentities'; deviceId: string; pairs: readonly IdentityPair[] };

export const contactsDecider: Decider<ContactsState, ContactsCommand, ContactEvent> = {
  eventTypes: CONTACT_EVENT_TYPES,

  initialState: () => ({ byNumber: new Map(), lidByNumber: new Map() }),

  evolve(state, event) {
    if (event.type === 'IdentitiesLearned') {
      const lidByNumber = new Map(state.lidByNumber);
      for (const pair of event.data.pairs) lidByNumber.set(pair.number, pair.lid);
      return { ...state, lidByNumber };
    }
    const byNumber = new Map(state.byNumber);
    for (const contact of event.data.contacts) {
      const before = byNumber.get(contact.number);
      const name = contact.name || before?.name;
      const pushName = contact.pushName || before?.pushName;
      byNumber.set(contact.number, { jid: contact.jid, ...(name ? { name } : {}), ...(pushName ? { pushName } : {}) });
    }
    return { ...state, byNumber };
  },

  decide(command, state) {
    if (command.type === 'RecordIdentities') {
      const pairs = identityChanges(command.pairs, (number) => state.lidByNumber.get(number));
      return pairs.length === 0 ? [] : [{ type: 'IdentitiesLearned', data: { deviceId: command.deviceId, pairs } }];
    }
    const changes = contactChanges(command.contacts, (number) => state.byNumber.get(number));
    const events: ContactEvent[] = [];
    for (let start = 0; start < changes.length; start += CONTACTS_PER_EVENT) {
      events.push({
        type: 'ContactsUpdated',
        data: { deviceId: command.deviceId, contacts: changes.slice(start, start + CONTACTS_PER_EVENT) },
      });
    }
    return events;
  },
};

/**
 * The entries of a report that would change what is known, one per number (a later entry's fields win;
 * an absent or empty name keeps the one before).
 */
export function contactChanges(
  contacts: readonly Contact[],
  known: (number: string) => RecordedContact | undefined,
): Contact[] {
  const merged = new Map<string, Contact>();
  for (const contact of contacts) {
    if (!isNumber(contact.number)) continue;
    const before = merged.get(contact.number);
    const name = contact.name || before?.name;
    const pushName = contact.pushName || before?.pushName;
    merged.set(contact.number, {
      number: contact.number,
      jid: contact.jid,
      ...(name ? { name } : {}),
      ...(pushName ? { pushName } : {}),
    });
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

/**
 * The pairs of a report that are well formed and would change what is known, one per number (a later
 * pair wins). WhatsApp re-sends its mapping on every connection: a known pair is not recorded again.
 */
export function identityChanges(
  pairs: readonly IdentityPair[],
  knownLid: (number: string) => string | undefined,
): IdentityPair[] {
  const merged = new Map<string, string>();
  for (const pair of pairs) if (isNumber(pair.number) && isLid(pair.lid)) merged.set(pair.number, pair.lid);
  return [...merged].filter(([number, lid]) => knownLid(number) !== lid).map(([number, lid]) => ({ number, lid }));
}

/**
 * Snapshots hold the state as lists of entries. Those saved before identities were recorded are the
 * contacts' list alone.
 */
export const contactsSnapshot = {
  toJson: (state: ContactsState): unknown => ({ contacts: [...state.byNumber], lids: [...state.lidByNumber] }),
  fromJson: (json: unknown): ContactsState => {
    if (Array.isArray(json))
      return { byNumber: new Map(json as Array<[string, RecordedContact]>), lidByNumber: new Map() };
    const { contacts, lids } = json as { contacts: Array<[string, RecordedContact]>; lids: Array<[string, string]> };
    return { byNumber: new Map(contacts), lidByNumber: new Map(lids) };
  },
};
