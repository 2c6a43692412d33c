/**
 * LID ↔ number pairs of a Baileys device (fake socket): Baileys' `lid-mapping.update` and the alternative
 * address of an inbound message's key, and contact entries that carry both forms, are recorded (IdentitiesLearned) and answered by
 * GET /contacts/:id/identity; a pair repeated is recorded once; a rebuild gives the same rows.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { contactsStream } from '../../../src/contacts/contact-events.js';
import { READ_MODEL_FILE } from '../../../src/projections/read-model-db.js';
import { useFakeSocketGateway } from './support/fake-socket-gateway.js';
import { eventually } from '../../support/eventually.js';

const ALICE = '4915112345678';
const ALICE_LID = '111122223333444@lid';
const BOB = '4915166666666';
const BOB_LID = '555566667777888@lid';
const CAROL = '4915177777777';
const CAROL_LID = '999900001111222@lid';
const DORA = '4915188888888';
const DORA_LID = '333344445555666@lid';
const ERIK = '4915199999999';
const ERIK_LID = '777788889999000@lid';

function identityRows(dataDir: string): unknown[] {
  const db = new Database(join(dataDir, READ_MODEL_FILE), { readonly: true });
  try {
    return db.prepare('SELECT * FROM identities ORDER BY device_id, number').all();
  } finally {
    db.close();
  }
}

describe('contact identities of a Baileys device (fake socket)', () => {
  const deviceId = 'wa-id';
  const world = useFakeSocketGateway(deviceId);
  const { sockets, get } = world;

  const identity = (id: string) => get(`/contacts/${encodeURIComponent(id)}/identity`);
  const known = (id: string) =>
    eventually(async () => {
      const answer = await identity(id);
      return answer.body.number !== null ? answer.body : undefined;
    }, `the identity of ${id}`);
  const learned = async () =>
    (await world.gateway.store.readStream(contactsStream(deviceId)))
      .filter((event) => event.type === 'IdentitiesLearned')
      .map((event) => event.data);

  it("records Baileys' LID mapping, once however often it is repeated", async () => {
    const socket = sockets.latest();
    socket.emit('lid-mapping.update', { pn: `${ALICE}@s.whatsapp.net`, lid: ALICE_LID });
    expect(await known(ALICE)).toEqual({ number: ALICE, lid: ALICE_LID });
    expect(await known(ALICE_LID)).toEqual({ number: ALICE, lid: ALICE_LID });
    socket.emit('lid-mapping.update', { pn: `${ALICE}@s.whatsapp.net`, lid: ALICE_LID });
    // Reported after the repeat on the same way: once it is known, the repeat was decided on.
    socket.emit('lid-mapping.update', { pn: `${CAROL}@s.whatsapp.net`, lid: CAROL_LID });
    expect(await known(CAROL_LID)).toEqual({ number: CAROL, lid: CAROL_LID });
    expect((await identity(BOB)).body).toEqual({ number: null, lid: null });
    expect(await learned()).toEqual([
      { deviceId, pairs: [{ number: ALICE, lid: ALICE_LID }] },
      { deviceId, pairs: [{ number: CAROL, lid: CAROL_LID }] },
    ]);
  });

  it("records the pair a message's key carries (a LID chat with the number as its alternative)", async () => {
    sockets.latest().emit('messages.upsert', {
      type: 'notify',
      messages: [
        {
          key: { remoteJid: BOB_LID, remoteJidAlt: `${BOB}@s.whatsapp.net`, fromMe: false, id: 'IN-BOB-LID-1' },
          message: { conversation: 'hello' },
          messageTimestamp: 1_700_000_000,
          pushName: 'Bob',
        },
      ],
    });
    expect(await known(BOB_LID)).toEqual({ number: BOB, lid: BOB_LID });
    expect((await learned()).at(-1)).toEqual({ deviceId, pairs: [{ number: BOB, lid: BOB_LID }] });
  });

  it('records the pairs contact entries carry (a LID with its phoneNumber, a number with its lid)', async () => {
    sockets.latest().emit('contacts.upsert', [
      { id: DORA_LID, phoneNumber: `${DORA}@s.whatsapp.net`, name: 'Dora' },
      { id: `${ERIK}@s.whatsapp.net`, lid: ERIK_LID, name: 'Erik' },
      { id: '121212121212121@lid', name: 'No number' },
    ]);
    expect(await known(DORA)).toEqual({ number: DORA, lid: DORA_LID });
    expect(await known(ERIK_LID)).toEqual({ number: ERIK, lid: ERIK_LID });
    expect((await identity('121212121212121@lid')).body).toEqual({ number: null, lid: null });
  });

  it('gives the same rows when rebuilt from position 0', async () => {
    const live = identityRows(world.gateway.dataDir);
    expect(live).toHaveLength(5);
    await world.gateway.projections.rebuild();
    expect(identityRows(world.gateway.dataDir)).toEqual(live);
  });
});
