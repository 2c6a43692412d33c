/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts). Lookups: number checks,
 * recipient verification before a send, avatars.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../src/engines/engine.js';
import { boom } from './support/fake-socket.js';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();

describe('Baileys engine (fake socket): lookups', () => {
  it('checkNumber answers from onWhatsApp', async () => {
    const { connection, socket } = await h.online();
    socket.whatsAppUsers.set(PEER, true);
    socket.whatsAppUsers.set('4915100000000', false);
    expect(await connection.checkNumber(PEER)).toEqual({ exists: true, jid: PEER_JID });
    expect(await connection.checkNumber('4915100000000')).toEqual({ exists: false });
    expect(await connection.checkNumber('4915111111111')).toEqual({ exists: false });
  });

  it('a send to a number that is not on WhatsApp fails permanently, before anything is sent', async () => {
    const { connection, socket } = await h.online();
    socket.whatsAppUsers.set('4915100000000', false);
    const error = await connection
      .send({ waMessageId: 'X1', to: '4915100000000', content: { kind: 'text', text: 'hi' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ code: 'recipient_not_found', permanent: true });
    expect(socket.sent).toEqual([]);
  });

  it('looks a recipient up once, then sends without asking again', async () => {
    const { connection, socket } = await h.online();
    socket.whatsAppUsers.set(PEER, true);
    await connection.send({ waMessageId: 'A', to: PEER, content: { kind: 'text', text: '1' } });
    await connection.send({ waMessageId: 'B', to: PEER, content: { kind: 'text', text: '2' } });
    expect(socket.lookups).toEqual([[PEER]]);
    expect(socket.sent.map((s) => s.options?.messageId)).toEqual(['A', 'B']);
  });

  it("sends to the JID WhatsApp resolved a number to (Brazil's ninth digit), looked up once; receipts and revokes find the message", async () => {
    const { connection, events, socket } = await h.online();
    const typed = '5511987654321';
    const resolved = '551187654321@s.whatsapp.net';
    socket.onWhatsApp = async (...numbers: string[]) => {
      socket.lookups.push(numbers);
      return [{ jid: resolved, exists: true }];
    };
    await connection.send({ waMessageId: 'BR1', to: typed, content: { kind: 'text', text: 'oi' } });
    await connection.send({
      waMessageId: 'BR2',
      to: typed,
      content: { kind: 'reaction', messageId: 'BR1', emoji: '👍' },
    });
    await connection.revoke('BR1', typed);
    expect(socket.lookups).toEqual([[typed]]);
    expect(socket.sent.map((s) => s.jid)).toEqual([resolved, resolved, resolved]);
    expect((socket.sent[1].content as { react: { key: unknown } }).react.key).toEqual({
      remoteJid: resolved,
      fromMe: true,
      id: 'BR1',
    });
    expect((socket.sent[2].content as { delete: unknown }).delete).toEqual({
      remoteJid: resolved,
      fromMe: true,
      id: 'BR1',
    });
    socket.emit('messages.update', [
      { key: { remoteJid: resolved, fromMe: true, id: 'BR1' }, update: { status: 3, messageTimestamp: 7 } },
    ]);
    await eventually(() => events.receipts.length > 0, 'a receipt');
    expect(events.receipts).toEqual([{ waMessageId: 'BR1', status: 'delivered', recipient: typed, timestamp: 7 }]);
  });

  it('checkNumber remembers the resolved JID for later sends', async () => {
    const engine = h.makeEngine({ verifyRecipients: false });
    h.engine = engine;
    const { connection, socket } = await h.online();
    socket.onWhatsApp = async () => [{ jid: '551187654321@s.whatsapp.net', exists: true }];
    expect(await connection.checkNumber('5511987654321')).toEqual({ exists: true, jid: '551187654321@s.whatsapp.net' });
    await connection.send({ waMessageId: 'BR1', to: '5511987654321', content: { kind: 'text', text: 'oi' } });
    expect(socket.sent[0].jid).toBe('551187654321@s.whatsapp.net');
  });

  it('avatarUrl answers the URL, or null when there is no picture or it is hidden', async () => {
    const { connection, socket } = await h.online();
    socket.pictures.set(PEER_JID, 'https://pps.whatsapp.net/v/t61/abc.jpg');
    socket.pictures.set('4915100000002@s.whatsapp.net', boom(500, 'item-not-found', 404));
    socket.pictures.set('4915100000003@s.whatsapp.net', boom(500, 'not-authorized', 401));
    socket.pictures.set('4915100000004@s.whatsapp.net', undefined);
    socket.pictures.set('4915100000005@s.whatsapp.net', boom(408, 'Timed Out'));
    expect(await connection.avatarUrl(PEER)).toBe('https://pps.whatsapp.net/v/t61/abc.jpg');
    expect(await connection.avatarUrl('4915100000002')).toBeNull();
    expect(await connection.avatarUrl('4915100000003')).toBeNull();
    expect(await connection.avatarUrl('4915100000004')).toBeNull();
    await expect(connection.avatarUrl('4915100000005')).rejects.toMatchObject({
      name: 'EngineError',
      permanent: false,
    });
  });
});
