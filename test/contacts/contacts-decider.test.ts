import { describe, expect, it } from 'vitest';
import { contactsDecider, contactsSnapshot } from '../../src/contacts/contacts-decider.js';
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

  describe('LID ↔ number pairs', () => {
    const pair = { number: '4915111111111', lid: '111122223333444@lid' };
    it('records a new pair, and one whose LID changed', () =>
      spec
        .given([{ type: 'IdentitiesLearned', data: { deviceId: 'd', pairs: [pair] } }])
        .when({
          type: 'RecordIdentities',
          deviceId: 'd',
          pairs: [pair, { number: pair.number, lid: '999@lid' }, { number: '4915122222222', lid: '5@lid' }],
        })
        .then([
          {
            type: 'IdentitiesLearned',
            data: {
              deviceId: 'd',
              pairs: [
                { number: pair.number, lid: '999@lid' },
                { number: '4915122222222', lid: '5@lid' },
              ],
            },
          },
        ]));
    it('records nothing for known or malformed pairs (a LID is never taken for a number)', () =>
      spec
        .given([{ type: 'IdentitiesLearned', data: { deviceId: 'd', pairs: [pair] } }])
        .when({
          type: 'RecordIdentities',
          deviceId: 'd',
          pairs: [pair, { number: '111122223333444@lid', lid: pair.number }, { number: '', lid: '1@lid' }],
        })
        .then([]));
    it('reads snapshots saved before pairs were recorded, and keeps pairs in new ones', () => {
      const old = contactsSnapshot.fromJson([[anna.number, { jid: anna.jid, name: 'Anna' }]]);
      expect(old.byNumber.get(anna.number)).toEqual({ jid: anna.jid, name: 'Anna' });
      expect(old.lidByNumber.size).toBe(0);
      const state = contactsDecider.evolve(old, {
        type: 'IdentitiesLearned',
        data: { deviceId: 'd', pairs: [pair] },
      });
      const again = contactsSnapshot.fromJson(JSON.parse(JSON.stringify(contactsSnapshot.toJson(state))));
      expect(again).toEqual(state);
    });
  });
});
