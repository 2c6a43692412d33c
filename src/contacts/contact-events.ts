/**
 * Contact events on a device's `contacts-<deviceId>` stream: what the engine reported about the
 * account's contacts (address book names, push names) and the LID ↔ number pairs it learned. Only changes are recorded: an entry that would
 * change nothing in the contacts read model is left out, and a report that changes nothing appends
 * nothing (see contacts-decider.ts).
 */
import type { Contact, IdentityPair } from '../engines/engine.js';

export const contactsStream = (deviceId: string) => `contacts-${deviceId}`;

export interface ContactsUpdatedData {
  deviceId: string;
  /**
   * Field by field: a `name` or `pushName` that is absent leaves the known one as it is (WhatsApp's
   * contact updates are partial). At most one entry per number.
   */
  contacts: Contact[];
}

export interface IdentitiesLearnedData {
  deviceId: string;
  /**
   * LID ↔ number pairs the network made known (WhatsApp's LID mapping, a message's alternative address),
   * only the new or changed ones. A pair replaces any earlier pair of its number or of its LID.
   */
  pairs: IdentityPair[];
}

export type ContactEvent =
  { type: 'ContactsUpdated'; data: ContactsUpdatedData } | { type: 'IdentitiesLearned'; data: IdentitiesLearnedData };

export const CONTACT_EVENT_TYPES: ReadonlySet<string> = new Set<ContactEvent['type']>([
  'ContactsUpdated',
  'IdentitiesLearned',
]);
