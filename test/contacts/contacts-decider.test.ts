import { describe, it } from 'vitest';
import { contactsDecider } from '../../src/contacts/contacts-decider.js';
import { deciderSpecification } from '../support/decider-specification.js';

const spec = deciderSpecification(contactsDecider);
const jid = (n: string) => `${n}@s.whatsapp.net`;
const anna = { number: '4915111111111', jid: jid('4915111111111'), name: 'Anna' };

describe('the contacts decider', () => {
  it('records a first report', () =>
    spec
      .given([])
      .when({ type: 'RecordContacts', deviceId: 'd', contacts: [anna] })
      .then([{ type: 'ContactsUpdated', data: { deviceId: 'd', contacts: [anna] } }]));
  it('records nothing for a report the stream already holds, field by field', () =>
    spec
      .given([
        { type: 'ContactsUpdated', data: { deviceId: 'd', contacts: [anna] } },
        {
          type: 'ContactsUpdated',
          data: { deviceId: 'd', contacts: [{ number: anna.number, jid: anna.jid, pushName: 'A' }] },
        },
      ])
      .when({
        type: 'RecordContacts',
        deviceId: 'd',
        contacts: [
          { ...anna, pushName: 'A' },
          { number: anna.number, jid: anna.jid },
        ],
      })
      .thenNothing());
  it('records only the entries that change something', () =>
    spec
      .given([{ type: 'ContactsUpdated', data: { deviceId: 'd', contacts: [anna] } }])
      .when({
        type: 'RecordContacts',
        deviceId: 'd',
        contacts: [
          anna,
          { ...anna, number: '4915122222222', jid: jid('4915122222222'), name: 'Ben' },
          { ...anna, name: 'Anna K.' },
        ],
      })
      .then([
        {
          type: 'ContactsUpdated',
          data: {
            deviceId: 'd',
            contacts: [
              { ...anna, name: 'Anna K.' },
              { number: '4915122222222', jid: jid('4915122222222'), name: 'Ben' },
            ],
          },
        },
      ]));
});
