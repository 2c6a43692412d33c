/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts). Lookups: number checks,
 * recipient verification before a send, avatars.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../src/engines/engine.js';
import { boom } from './support/fake-socket.js';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';

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
    const error = await connection.send({ waMessageId: 'X1', to: '4915100000000', content: { kind: 'text', text: 'hi' } }).catch((e: unknown) => e);
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
    await expect(connection.avatarUrl('4915100000005')).rejects.toMatchObject({ name: 'EngineError', permanent: false });
  });
});
