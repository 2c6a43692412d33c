/**
 * The contact-presence read model (src/contacts/contact-presence.ts), fed events directly: per device and contact,
 * the last state the network reported and when the contact was last seen online; a deleted device leaving nothing.
 */
import { describe, it } from 'vitest';
import { ContactPresenceReadModel } from '../../src/contacts/contact-presence.js';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import type { InboxEvent, PresenceUpdatedData } from '../../src/inbox/inbox-events.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

type Event = InboxEvent | DeviceEvent;

const spec = readModelSpecification<Event, ContactPresenceReadModel>((db) => new ContactPresenceReadModel(db));
const ANNA = '4915100000001';
const GROUP = '120363000000000001@g.us';
const presence = (
  deviceId: string,
  state: PresenceUpdatedData['state'],
  at: string,
  more: Partial<PresenceUpdatedData> = {},
): GivenEvent<Event> => ({
  type: 'PresenceUpdated',
  data: { deviceId, chatId: `${ANNA}@s.whatsapp.net`, from: ANNA, state, ...more },
  createdAt: new Date(at),
});
const deleted = (deviceId: string): Event => ({ type: 'DeviceDeleted', data: { deviceId } });

describe('contact presence read model', () => {
  it('answers unknown for a contact never reported, and the last state reported, over several batches', () => {
    spec
      .given(presence('d1', 'available', '2026-03-01T10:00:00Z'))
      .then((model) => model.get('d1', ANNA), { state: 'available', lastSeen: null })
      .then((model) => model.get('d2', ANNA), { state: 'unknown', lastSeen: null })
      .then((model) => model.get('d1', '4915100000002'), { state: 'unknown', lastSeen: null })
      .given(presence('d1', 'typing', '2026-03-01T10:00:05Z'))
      .then((model) => model.get('d1', ANNA), { state: 'available', lastSeen: null });
  });

  it('going offline: seen when the network says, else when it was recorded; kept while online again', () => {
    spec
      .given(presence('d1', 'unavailable', '2026-03-01T10:00:00.000Z'))
      .then((model) => model.get('d1', ANNA), { state: 'unavailable', lastSeen: '2026-03-01T10:00:00.000Z' })
      .given(
        presence('d1', 'available', '2026-03-01T11:00:00.000Z'),
        presence('d1', 'unavailable', '2026-03-01T12:00:00.000Z', { lastSeen: '2026-03-01T11:59:00.000Z' }),
      )
      .then((model) => model.get('d1', ANNA), { state: 'unavailable', lastSeen: '2026-03-01T11:59:00.000Z' })
      .given(presence('d1', 'available', '2026-03-01T13:00:00.000Z'))
      .then((model) => model.get('d1', ANNA), { state: 'available', lastSeen: '2026-03-01T11:59:00.000Z' });
  });

  it("leaves a contact's presence alone when it types in a group", () => {
    spec
      .given(presence('d1', 'unavailable', '2026-03-01T10:00:00.000Z'))
      .given(presence('d1', 'typing', '2026-03-01T10:05:00.000Z', { chatId: GROUP }))
      .then((model) => model.get('d1', ANNA), { state: 'unavailable', lastSeen: '2026-03-01T10:00:00.000Z' });
  });

  it("forgets a deleted device's contacts, and leaves other devices' alone", () => {
    spec
      .given(presence('d1', 'available', '2026-03-01T10:00:00Z'), presence('d2', 'available', '2026-03-01T10:00:00Z'))
      .given(deleted('d1'))
      .then((model) => model.get('d1', ANNA), { state: 'unknown', lastSeen: null })
      .then((model) => model.get('d2', ANNA), { state: 'available', lastSeen: null });
  });
});
