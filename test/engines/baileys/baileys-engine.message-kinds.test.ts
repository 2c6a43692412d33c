/**
 * Every new message kind through the Baileys engine and a fake socket, on real Baileys protobufs:
 * outgoing contents (checked by Baileys' own generateWAMessageContent), inbound groups, quotes,
 * mentions, contacts, polls, edits, revokes, decrypted poll votes, presence, calls, read receipts,
 * media downloads, and LID senders (resolved, or `@lid`).
 */
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { type WAMessage, generateWAMessageContent, initAuthCreds, proto } from 'baileys';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthRecords } from '../../../src/engines/baileys/auth/auth-records.js';
import { type BaileysEngine, createBaileysEngine } from '../../../src/engines/baileys/baileys-engine.js';
import type { BaileysConnection } from '../../../src/engines/baileys/baileys-connection.js';
import type { EngineConnection } from '../../../src/engines/engine.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { tempDir } from '../../support/gateway.js';
import { type FakeSocket, fakeSocketFactory } from './support/fake-socket.js';
import { type RecordingEvents, recordingEvents } from './support/recording-events.js';
import { eventually } from '../../support/eventually.js';

const ME = '4915100000001:7@s.whatsapp.net';
const ME_JID = '4915100000001@s.whatsapp.net';
const PEER = '4915112345678';
const PEER_JID = `${PEER}@s.whatsapp.net`;
const GROUP = '120363001234567890@g.us';
const SECRET = randomBytes(32).toString('base64');

/** Through the wire format and back: what Baileys hands over is a decoded protobuf. */
const real = (message: WAMessage): WAMessage =>
  proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(message).finish()) as WAMessage;

/** A vote as WhatsApp encrypts it (the inverse of Baileys' decryptPollVote). */
function encryptVote(
  options: string[],
  ctx: { pollMsgId: string; pollCreatorJid: string; voterJid: string; secret: string },
): proto.Message.IPollEncValue {
  const sign = Buffer.concat([
    Buffer.from(ctx.pollMsgId),
    Buffer.from(ctx.pollCreatorJid),
    Buffer.from(ctx.voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(Buffer.from(ctx.secret, 'base64')).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${ctx.pollMsgId}\u0000${ctx.voterJid}`));
  const plain = proto.Message.PollVoteMessage.encode({
    selectedOptions: options.map((o) => createHash('sha256').update(o).digest()),
  }).finish();
  return { encPayload: Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]), encIv: iv };
}

describe('Baileys engine: every message kind (fake socket, real protobufs)', () => {
  let dir: string;
  let store: SqliteEventStore;
  let sockets: ReturnType<typeof fakeSocketFactory>;
  let engine: BaileysEngine;
  const polls = new Map<string, { options: string[]; secret: string }>();
  const downloads: string[] = [];

  beforeEach(() => {
    dir = tempDir('dmg-baileys-kinds-');
    store = new SqliteEventStore(join(dir, 'events.sqlite'));
    sockets = fakeSocketFactory();
    engine = createBaileysEngine({
      store,
      logger: pino({ level: 'silent' }),
      makeSocket: sockets.factory,
      keepAliveIntervalMs: 60_000,
      verifyRecipients: false,
      polls: async (_deviceId, id) => polls.get(id),
      downloadMedia: async (message) => {
        downloads.push(message.key.id!);
        return Readable.from([Buffer.from('media bytes')]);
      },
    });
  });

  afterEach(async () => {
    await engine.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function online(): Promise<{ connection: EngineConnection; events: RecordingEvents; socket: FakeSocket }> {
    await new AuthRecords(store, 'dev-1', undefined).write('creds', {
      ...initAuthCreds(),
      me: { id: ME, name: 'Shop' },
    });
    const events = recordingEvents();
    const connection = await engine.connect('dev-1', events);
    const socket = sockets.latest();
    socket.open('77777777777@lid');
    await eventually(() => events.onlines.length === 1);
    return { connection, events, socket };
  }

  const upsert = (socket: FakeSocket, ...messages: WAMessage[]) =>
    socket.emit('messages.upsert', { type: 'notify', messages: messages.map(real) });

  describe('sending', () => {
    it('maps stickers, contacts, polls, forwards and edits; Baileys builds valid messages from them', async () => {
      const { connection, socket } = await online();
      const file = join(dir, 'sticker.webp');
      (await import('node:fs')).writeFileSync(file, 'RIFF');
      await connection.send({
        waMessageId: 'S1',
        to: PEER,
        content: { kind: 'sticker', media: { path: file, mimetype: 'image/webp', size: 4 } },
      });
      await connection.send({
        waMessageId: 'C1',
        to: PEER,
        content: { kind: 'contact', contacts: [{ name: 'Eve\nX', phone: '+49 151 1', organization: 'A;B' }] },
      });
      await connection.send({
        waMessageId: 'P1',
        to: GROUP,
        content: {
          kind: 'poll',
          question: 'Lunch?',
          options: ['Pizza', 'Pasta'],
          multipleAnswers: false,
          secret: SECRET,
        },
      });
      await connection.send({
        waMessageId: 'F1',
        to: '123456789@lid',
        content: { kind: 'forward', content: { kind: 'text', text: 'fwd' } },
      });
      await connection.send({ waMessageId: 'E1', to: PEER, content: { kind: 'edit', messageId: 'P0', text: 'fixed' } });

      expect(socket.sent.map((s) => [s.jid, s.options?.messageId])).toEqual([
        [PEER_JID, 'S1'],
        [PEER_JID, 'C1'],
        [GROUP, 'P1'],
        ['123456789@lid', 'F1'],
        [PEER_JID, 'E1'],
      ]);
      const [sticker, contact, poll, forward, edit] = socket.sent.map((s) => s.content as any);
      expect(sticker).toEqual({ sticker: { url: file }, mimetype: 'image/webp' });
      expect(contact.contacts.contacts[0].vcard).toContain('FN:Eve\\nX');
      expect(contact.contacts.contacts[0].vcard).toContain('ORG:A\\;B');
      expect(poll.poll).toMatchObject({ name: 'Lunch?', values: ['Pizza', 'Pasta'], selectableCount: 1 });
      expect(forward).toEqual({
        text: 'fwd',
        linkPreview: null,
        contextInfo: { isForwarded: true, forwardingScore: 1 },
      });
      expect(edit).toEqual({ text: 'fixed', edit: { remoteJid: PEER_JID, fromMe: true, id: 'P0' } });

      const upload = async () => {
        throw new Error('no upload here');
      };
      const built = async (content: any, jid = PEER_JID) =>
        proto.Message.decode(proto.Message.encode(await generateWAMessageContent(content, { upload, jid })).finish());
      const pollMessage = await built(poll, GROUP);
      expect(pollMessage.pollCreationMessageV3 ?? pollMessage.pollCreationMessage).toMatchObject({
        name: 'Lunch?',
        selectableOptionsCount: 1,
      });
      // The poll's secret is the one the gateway kept: its votes can be decrypted.
      expect(Buffer.from(pollMessage.messageContextInfo!.messageSecret!).toString('base64')).toBe(SECRET);
      expect((await built(contact)).contactMessage?.vcard).toContain('waid=491511:+491511');
      expect((await built(forward)).extendedTextMessage?.contextInfo).toMatchObject({
        isForwarded: true,
        forwardingScore: 1,
      });
      expect((await built(edit)).protocolMessage).toMatchObject({
        type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
        key: { id: 'P0' },
      });
    });

    it('quotes replyTo and mentions numbers', async () => {
      const { connection, socket } = await online();
      await connection.send({
        waMessageId: 'R1',
        to: GROUP,
        content: { kind: 'text', text: `hi @${PEER}` },
        replyTo: { waMessageId: 'Q1', fromMe: false, from: PEER, type: 'text', body: 'question' },
        mentions: [PEER, '555@lid'],
      });
      const [sent] = socket.sent;
      expect(sent.content).toMatchObject({ text: `hi @${PEER}`, mentions: [PEER_JID, '555@lid'] });
      expect(sent.options).toMatchObject({
        messageId: 'R1',
        quoted: {
          key: { remoteJid: GROUP, fromMe: false, id: 'Q1', participant: PEER_JID },
          message: { conversation: 'question' },
        },
      });
      await connection.send({
        waMessageId: 'R2',
        to: PEER,
        content: { kind: 'text', text: 'mine' },
        replyTo: { waMessageId: 'Q2', fromMe: true, from: '', type: 'text', body: 'x' },
      });
      expect(socket.sent[1].options?.quoted?.key).toEqual({ remoteJid: PEER_JID, fromMe: true, id: 'Q2' });
    });

    it("mentions on a poll reach the poll WhatsApp gets (moved there by the socket's patch), and mentions in a file caption are sent", async () => {
      const { connection, socket } = await online();
      const file = join(dir, 'x.pdf');
      (await import('node:fs')).writeFileSync(file, '%PDF');
      await connection.send({
        waMessageId: 'P1',
        to: GROUP,
        mentions: [PEER],
        content: {
          kind: 'poll',
          question: `Lunch, @${PEER}?`,
          options: ['Pizza', 'Pasta'],
          multipleAnswers: false,
          secret: SECRET,
        },
      });
      await connection.send({
        waMessageId: 'P2',
        to: GROUP,
        mentions: [PEER],
        content: {
          kind: 'poll',
          question: 'Which days?',
          options: ['Mo', 'Tu'],
          multipleAnswers: true,
          secret: SECRET,
        },
      });
      await connection.send({
        waMessageId: 'F1',
        to: GROUP,
        mentions: [PEER],
        content: {
          kind: 'file',
          media: { path: file, mimetype: 'application/pdf', size: 4, filename: 'x.pdf' },
          caption: `for @${PEER}`,
        },
      });
      const [single, multiple, document] = socket.sent.map((s) => s.content as any);
      expect(document).toMatchObject({ caption: `for @${PEER}`, mentions: [PEER_JID] });

      const patch = socket.config.patchMessageBeforeSending!;
      const onTheWire = async (content: any) => {
        const built = await generateWAMessageContent(content, {
          upload: async () => ({}) as never,
          jid: GROUP,
        });
        return proto.Message.decode(proto.Message.encode((await patch(built, [])) as proto.IMessage).finish());
      };
      const singleChoice = await onTheWire(single);
      expect(singleChoice.pollCreationMessageV3?.contextInfo?.mentionedJid).toEqual([PEER_JID]);
      expect(Buffer.from(singleChoice.messageContextInfo!.messageSecret!).toString('base64')).toBe(SECRET);
      expect((await onTheWire(multiple)).pollCreationMessage?.contextInfo?.mentionedJid).toEqual([PEER_JID]);
      // To our own other devices the message goes wrapped; the patch reaches inside.
      const wrapped = {
        deviceSentMessage: {
          destinationJid: GROUP,
          message: await generateWAMessageContent(single, { upload: async () => ({}) as never, jid: GROUP }),
        },
      };
      expect(
        ((await patch(wrapped, [])) as proto.IMessage).deviceSentMessage?.message?.pollCreationMessageV3?.contextInfo
          ?.mentionedJid,
      ).toEqual([PEER_JID]);
    });

    it('a reaction in a group names the author of its target: the member who wrote it, or this account', async () => {
      const { connection, socket } = await online();
      await connection.send({
        waMessageId: 'R1',
        to: GROUP,
        content: { kind: 'reaction', messageId: 'G1', emoji: '👍', fromMe: false, sender: PEER },
      });
      await connection.send({
        waMessageId: 'R2',
        to: GROUP,
        content: { kind: 'reaction', messageId: 'G2', emoji: '👍', fromMe: false, sender: '555@lid' },
      });
      await connection.send({
        waMessageId: 'R3',
        to: GROUP,
        content: { kind: 'reaction', messageId: 'G3', emoji: '❤️', fromMe: true },
      });
      await connection.send({
        waMessageId: 'R4',
        to: PEER,
        content: { kind: 'reaction', messageId: 'D1', emoji: '❤️', fromMe: false, sender: PEER },
      });
      const keys = socket.sent.map((s) => (s.content as { react: { key: proto.IMessageKey } }).react.key);
      expect(keys).toEqual([
        { remoteJid: GROUP, fromMe: false, id: 'G1', participant: PEER_JID },
        { remoteJid: GROUP, fromMe: false, id: 'G2', participant: '555@lid' },
        { remoteJid: GROUP, fromMe: true, id: 'G3', participant: ME_JID },
        { remoteJid: PEER_JID, fromMe: false, id: 'D1' },
      ]);
      const built = await generateWAMessageContent(socket.sent[0].content, {
        upload: async () => ({}) as never,
        jid: GROUP,
      });
      expect(proto.Message.decode(proto.Message.encode(built).finish()).reactionMessage?.key).toMatchObject({
        participant: PEER_JID,
        id: 'G1',
      });
    });

    it('read receipts and presence go out at once', async () => {
      const { connection, socket } = await online();
      await connection.markRead!(GROUP, [
        { waMessageId: 'A', participant: PEER },
        { waMessageId: 'B', participant: '555@lid' },
      ]);
      expect(socket.reads).toEqual([
        [
          { remoteJid: GROUP, id: 'A', fromMe: false, participant: PEER_JID },
          { remoteJid: GROUP, id: 'B', fromMe: false, participant: '555@lid' },
        ],
      ]);
      await connection.sendPresence!('typing', PEER);
      await connection.sendPresence!('available');
      expect(socket.presences).toEqual([{ type: 'composing', toJid: PEER_JID }, { type: 'available' }]);
    });
  });

  describe('receiving', () => {
    it('group messages with participant, quote, mentions, contacts and polls; a LID that cannot be resolved is `@lid`', async () => {
      const { events, socket } = await online();
      socket.lidToPhone.set('444@lid', '4915144444444@s.whatsapp.net');
      upsert(
        socket,
        {
          key: { remoteJid: GROUP, participant: '444@lid', fromMe: false, id: 'G1' },
          messageTimestamp: 10,
          message: {
            extendedTextMessage: {
              text: 'see @4915112345678',
              contextInfo: {
                stanzaId: 'Q1',
                participant: '999@lid',
                quotedMessage: { conversation: 'the question' },
                mentionedJid: [PEER_JID, '888@lid'],
              },
            },
          },
        },
        {
          key: { remoteJid: '999@lid', fromMe: false, id: 'D1' },
          messageTimestamp: 11,
          message: {
            contactMessage: {
              displayName: 'Bob',
              vcard:
                'BEGIN:VCARD\nVERSION:3.0\nFN:Bob\nORG:ACME\nitem1.TEL;waid=4915112345678:+49 151 12345678\nEND:VCARD',
            },
          },
        },
        {
          key: { remoteJid: PEER_JID, fromMe: false, id: 'POLL1' },
          messageTimestamp: 12,
          message: {
            pollCreationMessageV3: {
              name: 'Lunch?',
              options: [{ optionName: 'Pizza' }, { optionName: 'Pasta' }],
              selectableOptionsCount: 1,
            },
            messageContextInfo: { messageSecret: Buffer.from(SECRET, 'base64') },
          },
        },
      );
      await eventually(() => events.inbounds.length === 3);
      const [group, contact, poll] = events.inbounds;
      expect(group).toMatchObject({
        waMessageId: 'G1',
        chatId: GROUP,
        isGroup: true,
        fromMe: false,
        from: '4915144444444',
        participant: '4915144444444',
        body: 'see @4915112345678',
        quoted: { waMessageId: 'Q1', from: '999@lid', type: 'text', body: 'the question' },
        mentions: [PEER, '888@lid'],
      });
      // Never the LID's digits as a phone number.
      expect(contact).toMatchObject({
        chatId: '999@lid',
        from: '999@lid',
        type: 'contact',
        contacts: [{ name: 'Bob', phone: '4915112345678', organization: 'ACME' }],
      });
      expect(poll).toMatchObject({
        type: 'poll',
        poll: { question: 'Lunch?', options: ['Pizza', 'Pasta'], multipleAnswers: false },
        secret: SECRET,
      });
    });

    it('edits and revokes are activities naming the message they change', async () => {
      const { events, socket } = await online();
      upsert(
        socket,
        {
          key: { remoteJid: PEER_JID, fromMe: false, id: 'EDIT1' },
          messageTimestamp: 20,
          message: {
            protocolMessage: {
              type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
              key: { id: 'M1', remoteJid: PEER_JID },
              editedMessage: { conversation: 'new text' },
            },
          },
        },
        {
          key: { remoteJid: GROUP, participant: PEER_JID, fromMe: false, id: 'REV1' },
          messageTimestamp: 21,
          message: {
            protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: 'M2', remoteJid: GROUP } },
          },
        },
      );
      await eventually(() => events.activities.length === 2);
      expect(events.activities).toEqual([
        { kind: 'edited', id: 'EDIT1', chatId: PEER, from: PEER, waMessageId: 'M1', body: 'new text', timestamp: 20 },
        { kind: 'revoked', id: 'REV1', chatId: GROUP, from: PEER, waMessageId: 'M2', timestamp: 21 },
      ]);
      expect(events.inbounds).toEqual([]);
    });

    it('decrypts a vote on a poll this device sent, with the secret the gateway kept', async () => {
      const { connection, events, socket } = await online();
      polls.set('MYPOLL', { options: ['Pizza', 'Pasta', 'Both'], secret: SECRET });
      const vote = encryptVote(['Pasta', 'Both'], {
        pollMsgId: 'MYPOLL',
        pollCreatorJid: ME_JID,
        voterJid: PEER_JID,
        secret: SECRET,
      });
      upsert(socket, {
        key: { remoteJid: PEER_JID, fromMe: false, id: 'VOTE1' },
        messageTimestamp: 30,
        message: {
          pollUpdateMessage: {
            pollCreationMessageKey: { remoteJid: PEER_JID, fromMe: true, id: 'MYPOLL' },
            vote,
            senderTimestampMs: 30_000,
          },
        },
      });
      // A vote that does not decrypt (wrong secret) is dropped, not reported with wrong options.
      const forged = encryptVote(['Pizza'], {
        pollMsgId: 'MYPOLL',
        pollCreatorJid: ME_JID,
        voterJid: PEER_JID,
        secret: randomBytes(32).toString('base64'),
      });
      upsert(socket, {
        key: { remoteJid: PEER_JID, fromMe: false, id: 'VOTE2' },
        message: {
          pollUpdateMessage: {
            pollCreationMessageKey: { remoteJid: PEER_JID, fromMe: true, id: 'MYPOLL' },
            vote: forged,
          },
        },
      });
      await eventually(() => events.activities.length === 1);
      await (connection as BaileysConnection).reportsSettled();
      expect(events.activities).toEqual([
        {
          kind: 'poll_vote',
          id: 'VOTE1',
          chatId: PEER,
          from: PEER,
          pollMessageId: 'MYPOLL',
          selectedOptions: ['Pasta', 'Both'],
          timestamp: 30,
        },
      ]);
    });

    it('presence updates and incoming calls', async () => {
      const { events, socket } = await online();
      socket.emit('presence.update', { id: PEER_JID, presences: { [PEER_JID]: { lastKnownPresence: 'composing' } } });
      socket.emit('presence.update', { id: GROUP, presences: { '321@lid': { lastKnownPresence: 'recording' } } });
      socket.emit('call', [
        {
          chatId: PEER_JID,
          from: PEER_JID,
          id: 'CALL1',
          date: new Date(40_000),
          offline: false,
          status: 'offer',
          isVideo: true,
          isGroup: false,
        },
        { chatId: PEER_JID, from: PEER_JID, id: 'CALL1', date: new Date(41_000), offline: false, status: 'terminate' },
      ]);
      await eventually(() => events.activities.length === 3);
      expect(events.activities).toEqual([
        { kind: 'presence', chatId: PEER, from: PEER, state: 'typing' },
        { kind: 'presence', chatId: GROUP, from: '321@lid', state: 'recording' },
        { kind: 'call', callId: 'CALL1', from: PEER, isVideo: true, isGroup: false, rejected: false, timestamp: 40 },
      ]);
    });

    it('media messages come with a download of their bytes', async () => {
      const { events, socket } = await online();
      upsert(socket, {
        key: { remoteJid: PEER_JID, fromMe: false, id: 'IMG1' },
        message: { imageMessage: { mimetype: 'image/jpeg', fileLength: 11, caption: 'c' } },
      });
      await eventually(() => events.inbounds.length === 1);
      const stream = await events.inbounds[0].downloadMedia!();
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString()).toBe('media bytes');
      expect(downloads).toEqual(['IMG1']);
    });
  });
});
