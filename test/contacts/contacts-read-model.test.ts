/**
 * The contacts read model (src/contacts/contacts-read-model.ts), fed events directly: the numbers a device has as
 * contacts, that wrote to it and that it wrote to, with the names last given; a deleted device leaving nothing.
 */
import { describe, it } from 'vitest';
import type { ContactEvent } from '../../src/contacts/contact-events.js';
import { ContactsReadModel } from '../../src/contacts/contacts-read-model.js';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import type { Contact } from '../../src/engines/engine.js';
import type { InboxEvent } from '../../src/inbox/inbox-events.js';
import type { OutboxEvent } from '../../src/outbox/stream/outbox-events.js';
import { type GivenEvent, readModelSpecification } from '../support/read-model-specification.js';

type Event = ContactEvent | InboxEvent | OutboxEvent | DeviceEvent;

const spec = readModelSpecification<Event, ContactsReadModel>((db) => new ContactsReadModel(db));
let seq = 0;
const contacts = (deviceId: string, ...entries: Contact[]): GivenEvent<Event> => ({
  type: 'ContactsUpdated',
  data: { deviceId, contacts: entries },
});
const received = (deviceId: string, from: string, pushName?: string): GivenEvent<Event> => ({
  type: 'MessageReceived',
  data: {
    deviceId,
    from,
    type: 'text',
    body: 'hi',
    timestamp: 1,
    waMessageId: `IN${++seq}`,
    ...(pushName === undefined ? {} : { pushName }),
  },
});
const queued = (deviceId: string, to: string): GivenEvent<Event> => ({
  type: 'OutboxMessageQueued',
  data: {
    deviceId,
    outboxId: `o${++seq}`,
    waMessageId: `OUT${seq}`,
    to,
    seq,
    content: { kind: 'text', text: 'hello' },
    createdAt: '2026-01-01T00:00:00.000Z',
  },
});
const deleted = (deviceId: string): Event => ({ type: 'DeviceDeleted', data: { deviceId } });
const jid = (number: string) => `${number}@s.whatsapp.net`;
const all = (deviceId: string) => (model: ContactsReadModel) => model.list(deviceId, { limit: 100 }).items;

describe('contacts read model', () => {
  it('keeps every number the device has as a contact, heard from or wrote to, by number, over several batches', () => {
    spec
      .given(
        contacts('d1', { number: '4915100000003', jid: jid('4915100000003'), name: 'Carla' }),
        received('d1', '4915100000001', 'Anna'),
      )
      .given(queued('d1', '4915100000002'), received('d2', '4915100000009', 'Other'))
      .then(all('d1'), [
        { number: '4915100000001', jid: jid('4915100000001'), pushName: 'Anna' },
        { number: '4915100000002', jid: jid('4915100000002') },
        { number: '4915100000003', jid: jid('4915100000003'), name: 'Carla' },
      ])
      .then(all('d2'), [{ number: '4915100000009', jid: jid('4915100000009'), pushName: 'Other' }])
      .then((model) => model.get('d2', '4915100000001'), undefined);
  });

  it('leaves a name that an update does not give as it was, takes the last one given, and the jid an update names', () => {
    spec
      .given(contacts('d1', { number: '4915100000001', jid: jid('4915100000001'), name: 'Anna', pushName: 'A' }))
      .given(
        received('d1', '4915100000001'),
        contacts('d1', { number: '4915100000001', jid: '123456789@lid' }),
        queued('d1', '4915100000001'),
      )
      .then((model) => model.get('d1', '4915100000001'), {
        number: '4915100000001',
        jid: '123456789@lid',
        name: 'Anna',
        pushName: 'A',
      })
      .given(received('d1', '4915100000001', 'Anna B'), contacts('d1', { number: '4915100000001', jid: jid('x') }))
      .given(contacts('d1', { number: '4915100000001', jid: '123456789@lid', name: 'Anna Bauer' }))
      .then((model) => model.get('d1', '4915100000001'), {
        number: '4915100000001',
        jid: '123456789@lid',
        name: 'Anna Bauer',
        pushName: 'Anna B',
      });
  });

  it('leaves out what is no number (a group, a LID, a status)', () => {
    spec
      .given(
        received('d1', '120363000000000001@g.us', 'Group'),
        queued('d1', 'status@broadcast'),
        contacts('d1', { number: '123456789@lid', jid: '123456789@lid', name: 'Lid' }),
      )
      .then(all('d1'), []);
  });

  it('pages by number and searches numbers, names and push names, folded', () => {
    spec
      .given(
        contacts(
          'd1',
          { number: '4915100000001', jid: jid('4915100000001'), name: 'Zoë' },
          { number: '4915100000002', jid: jid('4915100000002'), pushName: 'ZOE' },
          { number: '4915100000003', jid: jid('4915100000003'), name: 'Max' },
        ),
      )
      .given(received('d2', '4915100000004', 'Zoe'))
      .then((model) => model.list('d1', { limit: 2 }), {
        items: [
          { number: '4915100000001', jid: jid('4915100000001'), name: 'Zoë' },
          { number: '4915100000002', jid: jid('4915100000002'), pushName: 'ZOE' },
        ],
        nextAfter: '4915100000002',
      })
      .then(
        (model) => model.list('d1', { limit: 2, after: '4915100000002' }).items.map((c) => c.number),
        ['4915100000003'],
      )
      .then(
        (model) => model.list('d1', { limit: 10, q: 'zoe' }).items.map((c) => c.number),
        ['4915100000001', '4915100000002'],
      )
      .then((model) => model.list('d1', { limit: 10, q: '0003' }).items.map((c) => c.number), ['4915100000003']);
  });

  it('a batch rolled back at its checkpoint and applied again leaves what it says once', () => {
    spec
      .given(received('d1', '4915100000001', 'Anna'))
      .givenRetried(received('d1', '4915100000001', 'Anna B'), queued('d1', '4915100000002'))
      .then(all('d1'), [
        { number: '4915100000001', jid: jid('4915100000001'), pushName: 'Anna B' },
        { number: '4915100000002', jid: jid('4915100000002') },
      ]);
  });

  it("forgets a deleted device's contacts, also those of the same batch, and what arrives for it later", () => {
    spec
      .given(received('d1', '4915100000001', 'Anna'), received('d2', '4915100000001', 'Anna'))
      .given(queued('d1', '4915100000002'), deleted('d1'), received('d1', '4915100000003'))
      .then(all('d1'), [])
      .given(contacts('d1', { number: '4915100000004', jid: jid('4915100000004') }), queued('d1', '4915100000005'))
      .then(all('d1'), [])
      .then(all('d2'), [{ number: '4915100000001', jid: jid('4915100000001'), pushName: 'Anna' }]);
  });
});
