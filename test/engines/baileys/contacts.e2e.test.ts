/**
 * Contacts over HTTP with a Baileys device, the engine driven through the fake socket (WhatsApp itself
 * cannot run here): onWhatsApp lookups and profile pictures, cached; contacts.upsert / contacts.update
 * and inbound push names in the list; the read model rebuilt from position 0.
 */
import { describe, expect, it } from 'vitest';
import { contactsStream } from '../../../src/contacts/contact-events.js';
import { boom } from './support/fake-socket.js';
import { useFakeSocketGateway } from './support/fake-socket-gateway.js';
import { eventually } from '../../support/eventually.js';
import { type ContactItem, contactTables, listAll } from '../../contacts/support/contacts-gateway.js';

const ALICE = '4915112345678';
const BAKERY = '4915155555555';
const BOB = '4915166666666';
const NOBODY = '4915177777777';
const jid = (number: string) => `${number}@s.whatsapp.net`;

describe('contacts of a Baileys device (fake socket)', () => {
  const deviceId = 'wa-1';
  const world = useFakeSocketGateway(deviceId);
  const { sockets, get } = world;

  const contacts = async (q?: string): Promise<ContactItem[]> =>
    (await listAll(world.gateway.api, deviceId, world.key, q === undefined ? {} : { q })).items;

  describe('check', () => {
    it('answers from onWhatsApp, and asks WhatsApp once per number while the answer is cached', async () => {
      const socket = sockets.latest();
      socket.whatsAppUsers.set(ALICE, true);
      socket.whatsAppUsers.set(NOBODY, false);
      const first = await get(`/contacts/${ALICE}/check`);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ number: ALICE, exists: true, jid: jid(ALICE) });
      expect((await get(`/contacts/${NOBODY}/check`)).body).toEqual({ number: NOBODY, exists: false });

      expect((await get(`/contacts/${ALICE}/check`)).body).toEqual(first.body);
      expect((await get(`/contacts/${NOBODY}/check`)).body).toEqual({ number: NOBODY, exists: false });
      expect(socket.lookups.filter(([number]) => number === ALICE)).toHaveLength(1);
      expect(socket.lookups.filter(([number]) => number === NOBODY)).toHaveLength(1);
    });

    it('asks once when the same number is checked several times at once', async () => {
      const socket = sockets.latest();
      socket.whatsAppUsers.set(BOB, true);
      const answers = await Promise.all(Array.from({ length: 5 }, () => get(`/contacts/${BOB}/check`)));
      for (const answer of answers) expect(answer.body).toEqual({ number: BOB, exists: true, jid: jid(BOB) });
      expect(socket.lookups.filter(([number]) => number === BOB)).toHaveLength(1);
    });
  });

  describe('avatar', () => {
    it('answers the profile picture URL, cached', async () => {
      const socket = sockets.latest();
      socket.pictures.set(jid(ALICE), 'https://pps.whatsapp.net/v/alice-1.jpg');
      expect((await get(`/contacts/${ALICE}/avatar`)).body).toEqual({
        number: ALICE,
        url: 'https://pps.whatsapp.net/v/alice-1.jpg',
      });
      socket.pictures.set(jid(ALICE), 'https://pps.whatsapp.net/v/alice-2.jpg');
      expect((await get(`/contacts/${ALICE}/avatar`)).body).toEqual({
        number: ALICE,
        url: 'https://pps.whatsapp.net/v/alice-1.jpg',
      });
    });

    it('is null when there is no picture or it is hidden', async () => {
      const socket = sockets.latest();
      socket.pictures.set(jid(BAKERY), undefined);
      socket.pictures.set(jid(BOB), boom(401, 'not-authorized'));
      expect((await get(`/contacts/${BAKERY}/avatar`)).body).toEqual({ number: BAKERY, url: null });
      expect((await get(`/contacts/${BOB}/avatar`)).body).toEqual({ number: BOB, url: null });
    });

    it('answers 502 engine_error when WhatsApp fails, and caches nothing', async () => {
      const socket = sockets.latest();
      socket.pictures.set(jid(NOBODY), boom(500, 'internal-server-error'));
      const failed = await get(`/contacts/${NOBODY}/avatar`);
      expect(failed.status).toBe(502);
      expect(failed.body.code).toBe('engine_error');
      socket.pictures.set(jid(NOBODY), 'https://pps.whatsapp.net/v/nobody.jpg');
      expect((await get(`/contacts/${NOBODY}/avatar`)).body).toEqual({
        number: NOBODY,
        url: 'https://pps.whatsapp.net/v/nobody.jpg',
      });
    });
  });

  describe('list', () => {
    it("holds the account's contacts as WhatsApp reports them (only those with a phone number)", async () => {
      sockets
        .latest()
        .emit('contacts.upsert', [
          { id: jid(ALICE), name: 'Alice Müller', notify: 'Ali' },
          { id: '99887766554433@lid' },
          { id: '12345678901234@lid', phoneNumber: jid(BAKERY), verifiedName: 'Bäckerei Schmidt' },
        ]);
      await eventually(async () => ((await contacts()).length === 2 ? true : undefined), 'two contacts');
      expect(await contacts()).toEqual([
        { number: ALICE, jid: jid(ALICE), name: 'Alice Müller', pushName: 'Ali' },
        { number: BAKERY, jid: jid(BAKERY), name: 'Bäckerei Schmidt' },
      ]);
    });

    it('records a repeated report once, and a partial update keeps what it does not mention', async () => {
      const socket = sockets.latest();
      socket.emit('contacts.upsert', [{ id: jid(ALICE), name: 'Alice Müller', notify: 'Ali' }]);
      socket.emit('contacts.update', [{ id: jid(ALICE), notify: 'Alice M.' }]);
      await eventually(
        async () => ((await contacts()).find((c) => c.number === ALICE)?.pushName === 'Alice M.' ? true : undefined),
        'the new push name',
      );
      expect((await contacts()).find((c) => c.number === ALICE)).toEqual({
        number: ALICE,
        jid: jid(ALICE),
        name: 'Alice Müller',
        pushName: 'Alice M.',
      });
      // The stream also holds the LID ↔ number pair the bakery's entry carried (IdentitiesLearned).
      const events = (await world.gateway.store.readStream(contactsStream(deviceId))).filter(
        (event) => event.type === 'ContactsUpdated',
      );
      expect(events).toHaveLength(2);
      expect(events[1].data).toEqual({
        deviceId,
        contacts: [{ number: ALICE, jid: jid(ALICE), pushName: 'Alice M.' }],
      });
    });

    it('adds the senders of inbound messages with their push names', async () => {
      sockets.latest().emit('messages.upsert', {
        type: 'notify',
        messages: [
          {
            key: { remoteJid: jid(BOB), fromMe: false, id: 'IN-BOB-1' },
            message: { conversation: 'hello' },
            messageTimestamp: 1_700_000_000,
            pushName: 'Bob',
          },
        ],
      });
      await eventually(
        async () => ((await contacts()).some((c) => c.number === BOB) ? true : undefined),
        'Bob in the contacts',
      );
      expect((await contacts()).find((c) => c.number === BOB)).toEqual({ number: BOB, jid: jid(BOB), pushName: 'Bob' });
    });

    it('searches names and push names ignoring case and accents, and numbers', async () => {
      expect((await contacts('muller')).map((c) => c.number)).toEqual([ALICE]);
      expect((await contacts('BÄCKEREI')).map((c) => c.number)).toEqual([BAKERY]);
      expect((await contacts('bob')).map((c) => c.number)).toEqual([BOB]);
      expect((await contacts('alice m')).map((c) => c.number)).toEqual([ALICE]);
      expect((await contacts('4915155')).map((c) => c.number)).toEqual([BAKERY]);
      expect((await contacts('49151')).map((c) => c.number)).toEqual([ALICE, BAKERY, BOB]);
    });

    it('gives the same read model when rebuilt from position 0', async () => {
      const live = contactTables(world.gateway.dataDir);
      const liveList = await contacts();
      await world.gateway.projections.rebuild();
      expect(contactTables(world.gateway.dataDir)).toEqual(live);
      expect(await contacts()).toEqual(liveList);
    });
  });

  describe('offline', () => {
    it('answers 409 session_not_online once the session is closed, also for cached answers', async () => {
      expect(
        (await world.gateway.api('POST', `/devices/${deviceId}/session/close`, { deviceKey: world.key, json: {} }))
          .status,
      ).toBe(200);
      for (const path of [`/contacts/${ALICE}/check`, `/contacts/${ALICE}/avatar`]) {
        const answer = await get(path);
        expect(answer.status, path).toBe(409);
        expect(answer.body).toMatchObject({ code: 'session_not_online', detail: expect.stringContaining('closed') });
      }
      expect((await contacts()).length).toBe(3);
    });
  });
});
