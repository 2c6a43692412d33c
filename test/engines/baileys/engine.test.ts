/**
 * The Baileys engine driven through a fake socket that follows Baileys' event contract: the paths a
 * local server cannot exercise (QR pairing, every disconnect code, logouts, receipts, contacts,
 * lookups, avatars, each content kind's payload, a dead keepalive).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AuthenticationCreds, initAuthCreds } from 'baileys';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthRecords } from '../../../src/engines/baileys/auth/auth-records.js';
import { ValueCipher } from '../../../src/secrets/value-cipher.js';
import { type BaileysEngine, type BaileysEngineOptions, createBaileysEngine } from '../../../src/engines/baileys/baileys-engine.js';
import { createLazyBaileysEngine } from '../../../src/engines/baileys/index.js';
import { type EngineConnection, EngineError, type MediaFile } from '../../../src/engines/engine.js';
import { StoreUnavailableError } from '../../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../../support/gateway.js';
import { FakeSocket, boom, fakeSocketFactory } from './support/fake-socket.js';
import { type RecordingEvents, eventually, recordingEvents } from './support/recording-events.js';

const ME = '4915100000001:7@s.whatsapp.net';
const PEER = '4915112345678';
const PEER_JID = `${PEER}@s.whatsapp.net`;

describe('Baileys engine (fake socket)', () => {
  let dir: string;
  let store: SqliteEventStore;
  let sockets: ReturnType<typeof fakeSocketFactory>;
  let engine: BaileysEngine;

  beforeEach(() => {
    dir = tempDir('dmg-baileys-fake-');
    store = new SqliteEventStore(join(dir, 'events.sqlite'));
    sockets = fakeSocketFactory();
    engine = makeEngine();
  });

  afterEach(async () => {
    await engine.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function makeEngine(options: Partial<BaileysEngineOptions> = {}): BaileysEngine {
    return createBaileysEngine({
      store,
      logger: pino({ level: 'silent' }),
      makeSocket: sockets.factory,
      // Long enough that the watchdog stays out of tests that do not exercise it.
      keepAliveIntervalMs: 60_000,
      ...options,
    });
  }

  const records = (deviceId = 'dev-1', cipher?: ValueCipher) => new AuthRecords(store, deviceId, cipher);

  async function linkedCreds(deviceId = 'dev-1'): Promise<void> {
    await records(deviceId).write('creds', { ...initAuthCreds(), me: { id: ME, name: 'Shop' } });
  }

  /** A device with stored credentials, connected and online. */
  async function online(deviceId = 'dev-1'): Promise<{ connection: EngineConnection; events: RecordingEvents; socket: FakeSocket }> {
    await linkedCreds(deviceId);
    const events = recordingEvents();
    const connection = await engine.connect(deviceId, events);
    const socket = sockets.latest();
    socket.open();
    await eventually(() => expect(events.onlines).toHaveLength(1));
    return { connection, events, socket };
  }

  describe('connecting', () => {
    it('passes the stored credentials and the offline-only settings to Baileys', async () => {
      const { socket } = await online();
      const config = socket.config;
      expect(config.auth.creds.me?.id).toBe(ME);
      expect(config.version).toEqual(expect.arrayContaining([expect.any(Number)]));
      expect(config.version).toHaveLength(3);
      expect(config.shouldSyncHistoryMessage?.({} as never)).toBe(false);
      expect(config.markOnlineOnConnect).toBe(false);
      expect(config.keepAliveIntervalMs).toBe(60_000);
      expect(config.logger?.level).toBe('silent');
    });

    it('reports online with the linked account', async () => {
      const { events } = await online();
      expect(events.onlines[0]).toEqual({ phone: '4915100000001', jid: '4915100000001@s.whatsapp.net', name: 'Shop' });
    });

    it('issues QR codes for a device without credentials, each with its expiry', async () => {
      const events = recordingEvents();
      await engine.connect('dev-1', events);
      const socket = sockets.latest();
      expect(socket.config.auth.creds.me).toBeUndefined();
      const before = Date.now();
      socket.showQr('2@first,abc');
      socket.showQr('2@second,def');
      expect(events.qrs.map((q) => q.code)).toEqual(['2@first,abc', '2@second,def']);
      expect(events.qrs[0]!.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 20_000);
      expect(events.onlines).toEqual([]);
    });

    it('keeps the account linked by a scan: restart_required, then the next connect logs in without QR', async () => {
      const events = recordingEvents();
      await engine.connect('dev-1', events);
      const first = sockets.latest();
      first.showQr('2@ref');
      first.pair(ME, 'Shop');
      await eventually(() => expect(events.disconnects).toEqual([{ kind: 'restart_required', detail: expect.stringContaining('515') }]));

      // The pairing credentials land through the store's group commit; the next connect waits for them.
      await eventually(async () => expect((await records().read<AuthenticationCreds>('creds'))?.me?.id).toBe(ME));

      const again = recordingEvents();
      await engine.connect('dev-1', again);
      const second = sockets.latest();
      expect(second).not.toBe(first);
      expect(second.config.auth.creds.me?.id).toBe(ME);
      expect(second.config.auth.creds.noiseKey.private).toEqual(first.config.auth.creds.noiseKey.private);
      second.open();
      await eventually(() => expect(again.onlines).toHaveLength(1));
      expect(again.qrs).toEqual([]);
    });

    it('a reconnect right after the scan waits for the pairing credentials to be stored, even on a slow store', async () => {
      const slowStore = new Proxy(store, {
        get(target, property, receiver) {
          if (property === 'saveSnapshot') {
            return async (...args: Parameters<SqliteEventStore['saveSnapshot']>) => {
              await new Promise((resolve) => setTimeout(resolve, 30));
              return target.saveSnapshot(...args);
            };
          }
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const slow = makeEngine({ store: slowStore });
      const events = recordingEvents();
      let reconnected: Promise<unknown> | undefined;
      events.disconnected = (kind) => {
        // The actor reconnects at once on restart_required.
        if (kind === 'restart_required') reconnected = slow.connect('dev-1', recordingEvents());
      };
      await slow.connect('dev-1', events);
      sockets.latest().pair(ME, 'Shop');
      await eventually(() => expect(reconnected).toBeDefined());
      await reconnected;
      expect(sockets.latest().config.auth.creds.me?.id).toBe(ME);
      await slow.close();
    });

    it('a store that cannot be read makes connect fail transiently', async () => {
      const broken = new Proxy(store, {
        get(target, property, receiver) {
          if (property === 'loadSnapshot') return async () => Promise.reject(new StoreUnavailableError('store is away'));
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const other = makeEngine({ store: broken });
      await expect(other.connect('dev-1', recordingEvents())).rejects.toMatchObject({ name: 'EngineError', code: 'engine_error', permanent: false });
      await other.close();
    });

    it('the registry\'s lazy engine loads Baileys on first use and behaves the same', async () => {
      await linkedCreds('dev-lazy');
      const lazy = createLazyBaileysEngine({ store, logger: pino({ level: 'silent' }), makeSocket: sockets.factory, keepAliveIntervalMs: 60_000 });
      expect(lazy.name).toBe('baileys');
      const events = recordingEvents();
      const connection = await lazy.connect('dev-lazy', events);
      sockets.latest().open();
      await eventually(() => expect(events.onlines).toHaveLength(1));
      await connection.close();
      await lazy.forget('dev-lazy');
      expect(await records('dev-lazy').read('creds')).toBeUndefined();
      await lazy.close?.();
    });

    it('refuses to connect, permanently, when the stored credentials cannot be decrypted', async () => {
      await records('dev-1', new ValueCipher(Buffer.alloc(32, 1))).write('creds', initAuthCreds());
      const other = makeEngine({ encryptionKey: Buffer.alloc(32, 2) });
      const error = await other.connect('dev-1', recordingEvents()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'credentials_unreadable', permanent: true });
      expect((error as Error).message).toMatch(/wrong ENCRYPTION_KEY/);
      await other.close();
    });
  });

  describe('disconnects', () => {
    it.each([
      [515, 'restart_required'],
      [440, 'connection_replaced'],
      [408, 'transient'],
      [428, 'transient'],
      [500, 'transient'],
      [503, 'transient'],
      [undefined, 'transient'],
    ] as const)('close with %s is reported as %s, and the credentials stay', async (code, kind) => {
      const { events, socket } = await online();
      socket.closeWith(code);
      await eventually(() => expect(events.disconnects).toHaveLength(1));
      expect(events.disconnects[0]!.kind).toBe(kind);
      expect(events.log).toEqual(['online', `disconnected:${kind}`]);
      expect((await records().read<AuthenticationCreds>('creds'))?.me?.id).toBe(ME);
    });

    it('logged out by the phone (401): the credentials and keys are wiped before the actor hears of it', async () => {
      const { events, socket } = await online();
      await socket.config.auth.keys.set({ session: { [`${PEER}.0`]: Buffer.from('session-bytes') } });
      expect(await records().read('key/session/4915112345678.0')).toBeDefined();

      let credsWhenReported: unknown = 'unchecked';
      events.disconnected = (kind, detail) => {
        events.disconnects.push({ kind, detail });
        void records()
          .read('creds')
          .then((creds) => (credsWhenReported = creds));
      };
      socket.closeWith(401, 'Connection Failure');
      await eventually(() => expect(events.disconnects).toEqual([{ kind: 'logged_out', detail: expect.stringContaining('401') }]));
      await eventually(() => expect(credsWhenReported).toBeUndefined());
      expect(await records().read('key/session/4915112345678.0')).toBeUndefined();

      const fresh = recordingEvents();
      await engine.connect('dev-1', fresh);
      expect(sockets.latest().config.auth.creds.me).toBeUndefined(); // a new QR pairing
    });

    it('reports nothing after close() and keeps the credentials', async () => {
      const { connection, events, socket } = await online();
      await connection.close();
      expect(socket.endedWith).toEqual([undefined]);
      expect(events.disconnects).toEqual([]);
      expect((await records().read<AuthenticationCreds>('creds'))?.me?.id).toBe(ME);
    });

    it('logout() unlinks the device and wipes the credentials, without reporting a disconnect', async () => {
      const { connection, events, socket } = await online();
      await connection.logout();
      expect(socket.loggedOut).toBe(true);
      expect(events.disconnects).toEqual([]);
      expect(await records().read('creds')).toBeUndefined();
    });

    it('forget() closes the live socket and wipes the credentials', async () => {
      const { socket } = await online();
      await engine.forget('dev-1');
      expect(socket.endedWith).toHaveLength(1);
      expect(await records().read('creds')).toBeUndefined();
      expect(engine.connectionCount).toBe(0);
    });

    it('a second connect of the same device first closes the previous socket', async () => {
      const { socket: first, events } = await online();
      await engine.connect('dev-1', recordingEvents());
      expect(first.endedWith).toHaveLength(1);
      expect(events.disconnects).toEqual([]);
      expect(engine.connectionCount).toBe(1);
    });
  });

  describe('honest state', () => {
    beforeEach(() => {
      engine = makeEngine({ keepAliveIntervalMs: 40, keepAliveGraceMs: 60 });
    });

    it('a dead keepalive (no frame for too long) is reported as transient at once, and the socket is ended', async () => {
      const { events, socket } = await online();
      // The WebSocket stays "open" but nothing arrives anymore: no ping answers.
      await eventually(() => expect(events.disconnects).toHaveLength(1));
      expect(events.disconnects[0]).toEqual({ kind: 'transient', detail: expect.stringMatching(/keepalive/) });
      expect(socket.endedWith).toHaveLength(1);
      expect(events.log).toEqual(['online', 'disconnected:transient']); // Baileys' own late close adds nothing
    });

    it('a silently dropped socket is reported as transient', async () => {
      const { events, socket } = await online();
      const keepAlive = setInterval(() => socket.frame(), 5);
      try {
        socket.ws.isOpen = false; // no close event from Baileys
        await eventually(() => expect(events.disconnects).toHaveLength(1));
        expect(events.disconnects[0]).toEqual({ kind: 'transient', detail: expect.stringMatching(/no longer open/) });
      } finally {
        clearInterval(keepAlive);
      }
    });

    it('stays online while ping answers keep arriving', async () => {
      const { events, socket } = await online();
      const keepAlive = setInterval(() => socket.frame(), 5);
      try {
        // Well over the 100 ms silence limit, several watchdog rounds.
        await new Promise((resolve) => setTimeout(resolve, 400));
        expect(events.disconnects).toEqual([]);
      } finally {
        clearInterval(keepAlive);
      }
    });

    it('commands fail with not_connected once the connection is lost', async () => {
      const { connection, events, socket } = await online();
      socket.closeWith(428);
      await eventually(() => expect(events.disconnects).toHaveLength(1));
      await expect(connection.send({ waMessageId: 'ID1', to: PEER, content: { kind: 'text', text: 'x' } })).rejects.toMatchObject({
        code: 'not_connected',
        permanent: false,
      });
    });
  });

  describe('receipts and contacts', () => {
    it('maps status updates of our messages to delivered, read and played', async () => {
      const { connection, events, socket } = await online();
      await connection.send({ waMessageId: '3EB0AAA', to: PEER, content: { kind: 'text', text: 'hi' } });
      const key = { remoteJid: PEER_JID, fromMe: true, id: '3EB0AAA' };
      socket.emit('messages.update', [
        { key, update: { status: 2, messageTimestamp: 1_700_000_001 } }, // server ack: not a receipt
        { key, update: { status: 3, messageTimestamp: 1_700_000_002 } },
        { key, update: { status: 4, messageTimestamp: 1_700_000_003 } },
        { key, update: { status: 5, messageTimestamp: 1_700_000_004 } },
        { key: { ...key, fromMe: false, id: 'THEIRS' }, update: { status: 4 } }, // our read of their message
        { key, update: { message: { conversation: 'edited' } } },
      ]);
      await eventually(() => expect(events.receipts).toHaveLength(3));
      expect(events.receipts).toEqual([
        { waMessageId: '3EB0AAA', status: 'delivered', recipient: PEER, timestamp: 1_700_000_002 },
        { waMessageId: '3EB0AAA', status: 'read', recipient: PEER, timestamp: 1_700_000_003 },
        { waMessageId: '3EB0AAA', status: 'played', recipient: PEER, timestamp: 1_700_000_004 },
      ]);
    });

    it('resolves a LID chat to the phone number, also for messages sent before a restart', async () => {
      const { events, socket } = await online();
      socket.lidToPhone.set('123456789@lid', PEER_JID);
      socket.emit('messages.update', [{ key: { remoteJid: '123456789@lid', fromMe: true, id: 'OLD' }, update: { status: 4, messageTimestamp: 5 } }]);
      await eventually(() => expect(events.receipts).toEqual([{ waMessageId: 'OLD', status: 'read', recipient: PEER, timestamp: 5 }]));
    });

    it('maps per-participant receipts', async () => {
      const { events, socket } = await online();
      socket.emit('message-receipt.update', [
        { key: { remoteJid: PEER_JID, fromMe: true, id: 'M1' }, receipt: { userJid: PEER_JID, receiptTimestamp: 10, readTimestamp: 11 } },
        { key: { remoteJid: PEER_JID, fromMe: false, id: 'M2' }, receipt: { userJid: PEER_JID, readTimestamp: 12 } },
      ]);
      await eventually(() => expect(events.receipts).toHaveLength(2));
      expect(events.receipts.map((r) => [r.waMessageId, r.status, r.recipient, r.timestamp])).toEqual([
        ['M1', 'delivered', PEER, 10],
        ['M1', 'read', PEER, 11],
      ]);
    });

    it('reports contacts that have a phone number', async () => {
      const { events, socket } = await online();
      socket.emit('contacts.upsert', [
        { id: PEER_JID, name: 'Bob', notify: 'Bobby' },
        { id: '777@lid', phoneNumber: '4915199999999@s.whatsapp.net', notify: 'Lid Person' },
        { id: '888@lid', notify: 'no number' },
        { id: '120363001234567890@g.us', name: 'a group' },
      ]);
      socket.emit('contacts.update', [{ id: PEER_JID, notify: 'Robert' }]);
      await eventually(() => expect(events.contactBatches).toHaveLength(2));
      expect(events.contactBatches).toEqual([
        [
          { number: PEER, jid: PEER_JID, name: 'Bob', pushName: 'Bobby' },
          { number: '4915199999999', jid: '4915199999999@s.whatsapp.net', pushName: 'Lid Person' },
        ],
        [{ number: PEER, jid: PEER_JID, pushName: 'Robert' }],
      ]);
    });
  });

  describe('inbound messages', () => {
    it('reports direct, own (from the phone) and group messages, in order, resolving LIDs; not status broadcasts or history', async () => {
      const { events, socket } = await online();
      socket.lidToPhone.set('555@lid', '4915155555555@s.whatsapp.net');
      socket.emit('messages.upsert', {
        type: 'notify',
        messages: [
          { key: { remoteJid: PEER_JID, fromMe: false, id: 'IN1' }, message: { conversation: 'one' }, messageTimestamp: 1, pushName: 'Bob' },
          { key: { remoteJid: PEER_JID, fromMe: true, id: 'OURS' }, message: { conversation: 'mine' }, messageTimestamp: 2 },
          { key: { remoteJid: '120363001234567890@g.us', participant: PEER_JID, fromMe: false, id: 'GROUP' }, message: { conversation: 'g' } },
          { key: { remoteJid: 'status@broadcast', participant: PEER_JID, fromMe: false, id: 'STATUS' }, message: { conversation: 's' } },
          { key: { remoteJid: '444@lid', remoteJidAlt: '4915144444444@s.whatsapp.net', fromMe: false, id: 'IN2' }, message: { conversation: 'two' }, messageTimestamp: 3 },
          { key: { remoteJid: '555@lid', fromMe: false, id: 'IN3' }, message: { imageMessage: { mimetype: 'image/png', caption: 'three' } }, messageTimestamp: 4 },
        ],
      });
      socket.emit('messages.upsert', { type: 'append', messages: [{ key: { remoteJid: PEER_JID, fromMe: false, id: 'HISTORY' }, message: { conversation: 'old' } }] });
      await eventually(() => expect(events.inbounds).toHaveLength(5));
      const direct = { isGroup: false, fromMe: false };
      expect(events.inbounds).toEqual([
        { waMessageId: 'IN1', from: PEER, chatId: PEER, ...direct, type: 'text', body: 'one', timestamp: 1, pushName: 'Bob' },
        { waMessageId: 'OURS', from: '4915100000001', chatId: PEER, isGroup: false, fromMe: true, type: 'text', body: 'mine', timestamp: 2 },
        {
          waMessageId: 'GROUP',
          from: PEER,
          chatId: '120363001234567890@g.us',
          isGroup: true,
          fromMe: false,
          participant: PEER,
          type: 'text',
          body: 'g',
          timestamp: expect.any(Number),
        },
        { waMessageId: 'IN2', from: '4915144444444', chatId: '4915144444444', ...direct, type: 'text', body: 'two', timestamp: 3 },
        {
          waMessageId: 'IN3',
          from: '4915155555555',
          chatId: '4915155555555',
          ...direct,
          type: 'image',
          body: 'three',
          timestamp: 4,
          media: { mimetype: 'image/png' },
          downloadMedia: expect.any(Function),
        },
      ]);
    });
  });

  describe('lookups', () => {
    it('checkNumber answers from onWhatsApp', async () => {
      const { connection, socket } = await online();
      socket.whatsAppUsers.set(PEER, true);
      socket.whatsAppUsers.set('4915100000000', false);
      expect(await connection.checkNumber(PEER)).toEqual({ exists: true, jid: PEER_JID });
      expect(await connection.checkNumber('4915100000000')).toEqual({ exists: false });
      expect(await connection.checkNumber('4915111111111')).toEqual({ exists: false });
    });

    it('a send to a number that is not on WhatsApp fails permanently, before anything is sent', async () => {
      const { connection, socket } = await online();
      socket.whatsAppUsers.set('4915100000000', false);
      const error = await connection.send({ waMessageId: 'X1', to: '4915100000000', content: { kind: 'text', text: 'hi' } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ code: 'recipient_not_found', permanent: true });
      expect(socket.sent).toEqual([]);
    });

    it('looks a recipient up once, then sends without asking again', async () => {
      const { connection, socket } = await online();
      socket.whatsAppUsers.set(PEER, true);
      await connection.send({ waMessageId: 'A', to: PEER, content: { kind: 'text', text: '1' } });
      await connection.send({ waMessageId: 'B', to: PEER, content: { kind: 'text', text: '2' } });
      expect(socket.lookups).toEqual([[PEER]]);
      expect(socket.sent.map((s) => s.options?.messageId)).toEqual(['A', 'B']);
    });

    it('avatarUrl answers the URL, or null when there is no picture or it is hidden', async () => {
      const { connection, socket } = await online();
      socket.pictures.set(PEER_JID, 'https://pps.whatsapp.net/v/t61/abc.jpg');
      socket.pictures.set('4915100000002@s.whatsapp.net', boom(500, 'item-not-found', 404));
      socket.pictures.set('4915100000003@s.whatsapp.net', boom(500, 'not-authorized', 401));
      socket.pictures.set('4915100000004@s.whatsapp.net', undefined);
      socket.pictures.set('4915100000005@s.whatsapp.net', boom(408, 'Timed Out'));
      expect(await connection.avatarUrl(PEER)).toBe('https://pps.whatsapp.net/v/t61/abc.jpg');
      expect(await connection.avatarUrl('4915100000002')).toBeNull();
      expect(await connection.avatarUrl('4915100000003')).toBeNull();
      expect(await connection.avatarUrl('4915100000004')).toBeNull();
      await expect(connection.avatarUrl('4915100000005')).rejects.toMatchObject({ name: 'EngineError', permanent: false });
    });
  });

  describe('sending each kind of content', () => {
    let media: (name: string, mimetype: string) => MediaFile;

    beforeEach(() => {
      media = (name, mimetype) => {
        const path = join(dir, name);
        writeFileSync(path, 'media bytes');
        return { path, mimetype, size: 11, filename: name };
      };
    });

    async function sendOne(content: Parameters<EngineConnection['send']>[0]['content'], options: Partial<BaileysEngineOptions> = {}) {
      if (Object.keys(options).length > 0) engine = makeEngine(options);
      const { connection, socket } = await online();
      socket.whatsAppUsers.set(PEER, true);
      await connection.send({ waMessageId: '3EB0C0FFEE', to: PEER, content });
      expect(socket.sent).toHaveLength(1);
      const [sent] = socket.sent;
      expect(sent!.jid).toBe(PEER_JID);
      expect(sent!.options).toEqual({ messageId: '3EB0C0FFEE' });
      return sent!.content;
    }

    it('text, never with a preview Baileys would fetch itself', async () => {
      expect(await sendOne({ kind: 'text', text: 'see https://example.com' })).toEqual({ text: 'see https://example.com', linkPreview: null });
    });

    it('image and video from the media file, with caption', async () => {
      const image = media('a.jpg', 'image/jpeg');
      expect(await sendOne({ kind: 'image', media: image, caption: 'cat' })).toEqual({ image: { url: image.path }, mimetype: 'image/jpeg', caption: 'cat' });
    });

    it('video without caption', async () => {
      const video = media('a.mp4', 'video/mp4');
      expect(await sendOne({ kind: 'video', media: video })).toEqual({ video: { url: video.path }, mimetype: 'video/mp4' });
    });

    it('audio as a voice note', async () => {
      const audio = media('a.ogg', 'audio/ogg; codecs=opus');
      expect(await sendOne({ kind: 'audio', media: audio, ptt: true })).toEqual({ audio: { url: audio.path }, mimetype: 'audio/ogg; codecs=opus', ptt: true });
    });

    it('file as a document with its name and caption', async () => {
      const file = media('invoice.pdf', 'application/pdf');
      expect(await sendOne({ kind: 'file', media: file, caption: 'May' })).toEqual({
        document: { url: file.path },
        mimetype: 'application/pdf',
        fileName: 'invoice.pdf',
        caption: 'May',
      });
    });

    it('location', async () => {
      expect(await sendOne({ kind: 'location', latitude: 52.52, longitude: 13.405, name: 'Berlin', address: 'Mitte' })).toEqual({
        location: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Berlin', address: 'Mitte' },
      });
    });

    it('link: the url appended to the text, no preview without a preview hook', async () => {
      expect(await sendOne({ kind: 'link', url: 'https://example.com/a', text: 'Read this' })).toEqual({ text: 'Read this https://example.com/a', linkPreview: null });
    });

    it('link with the preview from the hook', async () => {
      const thumbnail = Buffer.from('jpeg');
      const content = await sendOne(
        { kind: 'link', url: 'https://example.com/a', text: 'https://example.com/a is good' },
        { linkPreview: async (url) => ({ title: `Title of ${url}`, description: 'desc', jpegThumbnail: thumbnail }) },
      );
      expect(content).toEqual({
        text: 'https://example.com/a is good',
        linkPreview: { 'canonical-url': 'https://example.com/a', 'matched-text': 'https://example.com/a', title: 'Title of https://example.com/a', description: 'desc', jpegThumbnail: thumbnail },
      });
    });

    it('link with preview: false does not ask the hook', async () => {
      let asked = false;
      const content = await sendOne({ kind: 'link', url: 'https://example.com/a', text: '', preview: false }, { linkPreview: async () => ((asked = true), null) });
      expect(content).toEqual({ text: 'https://example.com/a', linkPreview: null });
      expect(asked).toBe(false);
    });

    it('reaction to a received message, and to one we sent', async () => {
      expect(await sendOne({ kind: 'reaction', messageId: 'THEIRS', emoji: '👍' })).toEqual({ react: { key: { remoteJid: PEER_JID, fromMe: false, id: 'THEIRS' }, text: '👍' } });
    });

    it('reaction: fromMe from the content, else from what this connection sent', async () => {
      const { connection, socket } = await online();
      socket.whatsAppUsers.set(PEER, true);
      await connection.send({ waMessageId: 'MINE', to: PEER, content: { kind: 'text', text: 'hello' } });
      await connection.send({ waMessageId: 'R1', to: PEER, content: { kind: 'reaction', messageId: 'MINE', emoji: '❤️' } });
      await connection.send({ waMessageId: 'R2', to: PEER, content: { kind: 'reaction', messageId: 'EARLIER', emoji: '', fromMe: true } });
      expect(socket.sent.slice(1).map((s) => s.content)).toEqual([
        { react: { key: { remoteJid: PEER_JID, fromMe: true, id: 'MINE' }, text: '❤️' } },
        { react: { key: { remoteJid: PEER_JID, fromMe: true, id: 'EARLIER' }, text: '' } },
      ]);
    });

    it('revoke deletes the message for everyone', async () => {
      const { connection, socket } = await online();
      await connection.revoke('3EB0DEAD', PEER);
      expect(socket.sent).toEqual([{ jid: PEER_JID, content: { delete: { remoteJid: PEER_JID, fromMe: true, id: '3EB0DEAD' } }, options: undefined }]);
    });

    it('a media file that cannot be read fails permanently with media_unavailable', async () => {
      const { connection, socket } = await online();
      socket.whatsAppUsers.set(PEER, true);
      const missing = { path: join(dir, 'gone.jpg'), mimetype: 'image/jpeg', size: 1 };
      await expect(connection.send({ waMessageId: 'M', to: PEER, content: { kind: 'image', media: missing } })).rejects.toMatchObject({
        code: 'media_unavailable',
        permanent: true,
      });
      expect(socket.sent).toEqual([]);
    });

    it('a failure inside Baileys is a transient EngineError', async () => {
      const { connection, socket } = await online();
      socket.whatsAppUsers.set(PEER, true);
      socket.sendFailure = boom(500, 'All encryptions failed');
      await expect(connection.send({ waMessageId: 'M', to: PEER, content: { kind: 'text', text: 'x' } })).rejects.toMatchObject({
        name: 'EngineError',
        code: 'engine_error',
        permanent: false,
        message: expect.stringContaining('All encryptions failed'),
      });
    });
  });
});
