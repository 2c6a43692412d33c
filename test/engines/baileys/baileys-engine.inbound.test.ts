/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts). What the network reports:
 * receipts, contacts and inbound messages.
 */
import { proto } from 'baileys';
import type { BaileysConnection } from '../../../src/engines/baileys/baileys-connection.js';
import { describe, expect, it } from 'vitest';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();

describe('Baileys engine (fake socket): receipts and contacts', () => {
  it('maps status updates of our messages to delivered, read and played', async () => {
    const { connection, events, socket } = await h.online();
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
    await eventually(() => events.receipts.length === 3);
    expect(events.receipts).toEqual([
      { waMessageId: '3EB0AAA', status: 'delivered', recipient: PEER, timestamp: 1_700_000_002 },
      { waMessageId: '3EB0AAA', status: 'read', recipient: PEER, timestamp: 1_700_000_003 },
      { waMessageId: '3EB0AAA', status: 'played', recipient: PEER, timestamp: 1_700_000_004 },
    ]);
  });

  it("a message the server refuses after the send (an error ack, Baileys' status ERROR) is reported failed, with the error code", async () => {
    const { connection, events, socket } = await h.online();
    await connection.send({ waMessageId: 'ERR1', to: PEER, content: { kind: 'text', text: 'hi' } });
    socket.emit('messages.update', [
      {
        key: { remoteJid: PEER_JID, fromMe: true, id: 'ERR1' },
        update: { status: proto.WebMessageInfo.Status.ERROR, messageStubParameters: ['463'] },
      },
      {
        key: { remoteJid: PEER_JID, fromMe: true, id: 'ERR2' },
        update: { status: proto.WebMessageInfo.Status.ERROR, messageStubParameters: ['479'], messageTimestamp: 9 },
      },
    ]);
    await eventually(() => events.receipts.length === 2);
    expect(events.receipts).toEqual([
      {
        waMessageId: 'ERR1',
        status: 'failed',
        recipient: PEER,
        timestamp: expect.any(Number),
        error: { code: 'refused_by_network', message: expect.stringContaining('error 463') },
      },
      {
        waMessageId: 'ERR2',
        status: 'failed',
        recipient: PEER,
        timestamp: 9,
        error: { code: 'refused_by_network', message: 'WhatsApp refused the message after it was sent (error 479)' },
      },
    ]);
  });

  it('resolves a LID chat to the phone number, also for messages sent before a restart', async () => {
    const { events, socket } = await h.online();
    socket.lidToPhone.set('123456789@lid', PEER_JID);
    socket.emit('messages.update', [
      { key: { remoteJid: '123456789@lid', fromMe: true, id: 'OLD' }, update: { status: 4, messageTimestamp: 5 } },
    ]);
    await eventually(() => events.receipts.length > 0, 'a receipt');
    expect(events.receipts).toEqual([{ waMessageId: 'OLD', status: 'read', recipient: PEER, timestamp: 5 }]);
  });

  it('maps per-participant receipts', async () => {
    const { events, socket } = await h.online();
    socket.emit('message-receipt.update', [
      {
        key: { remoteJid: PEER_JID, fromMe: true, id: 'M1' },
        receipt: { userJid: PEER_JID, receiptTimestamp: 10, readTimestamp: 11 },
      },
      { key: { remoteJid: PEER_JID, fromMe: false, id: 'M2' }, receipt: { userJid: PEER_JID, readTimestamp: 12 } },
    ]);
    await eventually(() => events.receipts.length === 2);
    expect(events.receipts.map((r) => [r.waMessageId, r.status, r.recipient, r.timestamp])).toEqual([
      ['M1', 'delivered', PEER, 10],
      ['M1', 'read', PEER, 11],
    ]);
  });

  it('reports contacts that have a phone number', async () => {
    const { events, socket } = await h.online();
    socket.emit('contacts.upsert', [
      { id: PEER_JID, name: 'Bob', notify: 'Bobby' },
      { id: '777@lid', phoneNumber: '4915199999999@s.whatsapp.net', notify: 'Lid Person' },
      { id: '888@lid', notify: 'no number' },
      { id: '120363001234567890@g.us', name: 'a group' },
    ]);
    socket.emit('contacts.update', [{ id: PEER_JID, notify: 'Robert' }]);
    await eventually(() => events.contactBatches.length === 2);
    expect(events.contactBatches).toEqual([
      [
        { number: PEER, jid: PEER_JID, name: 'Bob', pushName: 'Bobby' },
        { number: '4915199999999', jid: '4915199999999@s.whatsapp.net', pushName: 'Lid Person' },
      ],
      [{ number: PEER, jid: PEER_JID, pushName: 'Robert' }],
    ]);
  });
});

describe('Baileys engine (fake socket): inbound messages', () => {
  it('reports direct, own (from the phone) and group messages, in order, resolving LIDs; not broadcast lists (statuses: baileys-engine.status.test.ts)', async () => {
    const { events, socket } = await h.online();
    socket.lidToPhone.set('555@lid', '4915155555555@s.whatsapp.net');
    socket.emit('messages.upsert', {
      type: 'notify',
      messages: [
        {
          key: { remoteJid: PEER_JID, fromMe: false, id: 'IN1' },
          message: { conversation: 'one' },
          messageTimestamp: 1,
          pushName: 'Bob',
        },
        {
          key: { remoteJid: PEER_JID, fromMe: true, id: 'OURS' },
          message: { conversation: 'mine' },
          messageTimestamp: 2,
        },
        {
          key: { remoteJid: '120363001234567890@g.us', participant: PEER_JID, fromMe: false, id: 'GROUP' },
          message: { conversation: 'g' },
        },
        {
          key: { remoteJid: '1700000000@broadcast', participant: PEER_JID, fromMe: false, id: 'LIST' },
          message: { conversation: 's' },
        },
        {
          key: { remoteJid: '444@lid', remoteJidAlt: '4915144444444@s.whatsapp.net', fromMe: false, id: 'IN2' },
          message: { conversation: 'two' },
          messageTimestamp: 3,
        },
        {
          key: { remoteJid: '555@lid', fromMe: false, id: 'IN3' },
          message: { imageMessage: { mimetype: 'image/png', caption: 'three' } },
          messageTimestamp: 4,
        },
      ],
    });
    await eventually(() => events.inbounds.length === 5);
    const direct = { isGroup: false, fromMe: false };
    expect(events.inbounds).toEqual([
      {
        waMessageId: 'IN1',
        from: PEER,
        chatId: PEER,
        ...direct,
        type: 'text',
        body: 'one',
        timestamp: 1,
        pushName: 'Bob',
      },
      {
        waMessageId: 'OURS',
        from: '4915100000001',
        chatId: PEER,
        isGroup: false,
        fromMe: true,
        type: 'text',
        body: 'mine',
        timestamp: 2,
      },
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
      {
        waMessageId: 'IN2',
        from: '4915144444444',
        chatId: '4915144444444',
        ...direct,
        type: 'text',
        body: 'two',
        timestamp: 3,
      },
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

  it('reports what WhatsApp kept while the gateway was offline (upsert "append"); not the echoes of our sends, nor notifications without content', async () => {
    const { connection, events, socket } = await h.online();
    await connection.send({ waMessageId: 'OURS', to: PEER, content: { kind: 'text', text: 'sent here' } });
    socket.emit('messages.upsert', {
      type: 'append',
      messages: [
        {
          key: { remoteJid: PEER_JID, fromMe: false, id: 'OFFLINE1' },
          message: { conversation: 'sent while the gateway was down' },
          messageTimestamp: 1,
        },
        {
          key: { remoteJid: PEER_JID, fromMe: true, id: 'OURS' },
          message: { conversation: 'sent here' },
          messageTimestamp: 2,
        },
        {
          key: { remoteJid: PEER_JID, fromMe: true, id: 'PHONE1' },
          message: { conversation: 'from the phone meanwhile' },
          messageTimestamp: 3,
        },
        // A group notification (someone was added): a stub without content.
        {
          key: { remoteJid: '120363001234567890@g.us', participant: PEER_JID, fromMe: false, id: 'STUB' },
          messageStubType: 27,
          messageStubParameters: [PEER_JID],
        },
      ],
    });
    await eventually(() => events.inbounds.length === 2);
    await (connection as BaileysConnection).reportsSettled();
    expect(events.inbounds.map((m) => [m.waMessageId, m.fromMe, m.body])).toEqual([
      ['OFFLINE1', false, 'sent while the gateway was down'],
      ['PHONE1', true, 'from the phone meanwhile'],
    ]);
  });

  it('does not report the echo Baileys upserts while the send is still under way', async () => {
    const { connection, events, socket } = await h.online();
    const send = socket.sendMessage.bind(socket);
    // Baileys upserts its own send (emitOwnEvents) right after relaying it, before sendMessage resolves.
    socket.sendMessage = async (jid, content, options) => {
      socket.emit('messages.upsert', {
        type: 'append',
        messages: [
          {
            key: { remoteJid: jid, fromMe: true, id: options?.messageId ?? 'generated' },
            message: { conversation: 'echo' },
          },
        ],
      });
      return send(jid, content, options);
    };
    await connection.send({ waMessageId: 'ECHOED', to: PEER, content: { kind: 'text', text: 'echo' } });
    await connection.revoke('ECHOED', PEER);
    socket.emit('messages.upsert', {
      type: 'notify',
      messages: [{ key: { remoteJid: PEER_JID, fromMe: false, id: 'AFTER' }, message: { conversation: 'next' } }],
    });
    await eventually(() => events.inbounds.length > 0, 'an inbound message');
    expect(events.inbounds.map((m) => m.waMessageId)).toEqual(['AFTER']);
  });
});
