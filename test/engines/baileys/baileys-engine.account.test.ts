/**
 * The Baileys engine through a fake socket: the account's profile, about texts and blocking.
 */
import { describe, expect, it } from 'vitest';
import { boom } from './support/fake-socket.js';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();
const ME_JID = '4915100000001@s.whatsapp.net';

describe('Baileys engine (fake socket): the account', () => {
  it('reads the profile: name from the credentials, about from fetchStatus, the picture', async () => {
    const { connection, socket } = await h.online();
    socket.statuses.set(ME_JID, 'Open 9 to 5');
    socket.pictures.set(ME_JID, 'https://pps.whatsapp.net/me.jpg');
    expect(await connection.profileOps!.profile()).toEqual({
      name: 'Shop',
      about: 'Open 9 to 5',
      avatarUrl: 'https://pps.whatsapp.net/me.jpg',
    });
    socket.pictures.set(ME_JID, boom(500, 'item-not-found', 404));
    expect((await connection.profileOps!.profile()).avatarUrl).toBeNull();
  });

  it('changes the name and about text', async () => {
    const { connection, socket } = await h.online();
    await connection.profileOps!.setName('New');
    await connection.profileOps!.setAbout('Away');
    expect(socket.accountCalls).toEqual([
      { method: 'updateProfileName', args: ['New'] },
      { method: 'updateProfileStatus', args: ['Away'] },
    ]);
  });

  it('reads about texts: null when none or hidden, an error when the network fails', async () => {
    const { connection, socket } = await h.online();
    socket.statuses.set(PEER_JID, 'Hello');
    expect(await connection.profileOps!.about(PEER)).toBe('Hello');
    expect(await connection.profileOps!.about('4915122222222')).toBeNull();
    socket.statuses.set('4915133333333@s.whatsapp.net', boom(500, 'not-authorized', 401));
    expect(await connection.profileOps!.about('4915133333333')).toBeNull();
    socket.statuses.set('4915144444444@s.whatsapp.net', boom(500, 'internal-server-error', 500));
    await expect(connection.profileOps!.about('4915144444444')).rejects.toMatchObject({
      name: 'EngineError',
      code: 'engine_error',
    });
  });

  it('blocks, unblocks and lists by number', async () => {
    const { connection, socket } = await h.online();
    await connection.profileOps!.block(PEER);
    await connection.profileOps!.block('4915122222222');
    await connection.profileOps!.unblock('4915122222222');
    expect(socket.accountCalls.map((c) => c.args)).toEqual([
      [PEER_JID, 'block'],
      ['4915122222222@s.whatsapp.net', 'block'],
      ['4915122222222@s.whatsapp.net', 'unblock'],
    ]);
    expect(await connection.profileOps!.blocked()).toEqual([PEER]);
  });

  it('refuses while not online', async () => {
    const { connection } = await h.online();
    await connection.close();
    await expect(connection.profileOps!.profile()).rejects.toMatchObject({ code: 'not_connected' });
  });
});

describe('Baileys engine (fake socket): calls', () => {
  const call = (id: string) => ({
    chatId: PEER_JID,
    from: PEER_JID,
    id,
    date: new Date(),
    offline: false,
    status: 'offer' as const,
    isVideo: false,
    isGroup: false,
  });

  it('reports calls unrejected by default', async () => {
    const { events, socket } = await h.online();
    socket.emit('call', [call('C1')]);
    await eventually(() => events.activities.length === 1);
    expect(events.activities).toEqual([
      expect.objectContaining({ kind: 'call', callId: 'C1', from: PEER, rejected: false }),
    ]);
    expect(socket.rejectedCalls).toEqual([]);
  });

  it('rejects calls when the settings say so, and tells the caller', async () => {
    h.engine = h.makeEngine({
      deviceSettings: () => ({
        rejectCalls: true,
        rejectCallsMessage: 'Please write instead.',
        proxy: null,
        historySync: 'recent' as const,
      }),
    });
    const { events, socket } = await h.online();
    socket.emit('call', [call('C2')]);
    await eventually(() => events.activities.length === 1);
    expect(socket.rejectedCalls).toEqual([{ callId: 'C2', from: PEER_JID }]);
    expect(socket.sent).toEqual([
      { jid: PEER_JID, content: { text: 'Please write instead.' }, options: { messageId: expect.any(String) } },
    ]);
    expect(events.activities).toEqual([expect.objectContaining({ kind: 'call', callId: 'C2', rejected: true })]);
    // Baileys' echo of the reply is ours, not a message to report.
    socket.emit('messages.upsert', {
      type: 'append',
      messages: [
        {
          key: { remoteJid: PEER_JID, fromMe: true, id: socket.sent[0].options!.messageId! },
          message: { conversation: 'Please write instead.' },
        },
      ],
    });
    socket.emit('messages.upsert', {
      type: 'notify',
      messages: [{ key: { remoteJid: PEER_JID, fromMe: false, id: 'NEXT' }, message: { conversation: 'ok' } }],
    });
    await eventually(() => events.inbounds.length > 0, 'an inbound message');
    expect(events.inbounds.map((m) => m.waMessageId)).toEqual(['NEXT']);
  });

  it("a slow rejection holds back neither the messages behind the call nor the call's report of it", async () => {
    h.engine = h.makeEngine({
      deviceSettings: () => ({
        rejectCalls: true,
        rejectCallsMessage: 'Please write instead.',
        proxy: null,
        historySync: 'recent' as const,
      }),
    });
    const { events, socket } = await h.online();
    let answer!: () => void;
    socket.rejectCall = (callId: string, from: string) => {
      socket.rejectedCalls.push({ callId, from });
      return new Promise<void>((resolve) => (answer = resolve));
    };
    socket.emit('call', [call('C3')]);
    socket.emit('messages.upsert', {
      type: 'notify',
      messages: [
        {
          key: { remoteJid: PEER_JID, fromMe: false, id: 'AFTER_CALL' },
          message: { conversation: 'did you get my call?' },
        },
      ],
    });
    await eventually(() => events.inbounds.length > 0, 'an inbound message');
    expect(events.inbounds.map((m) => m.waMessageId)).toEqual(['AFTER_CALL']);
    expect(socket.rejectedCalls).toEqual([{ callId: 'C3', from: PEER_JID }]);
    expect(events.activities).toEqual([]);
    answer();
    await eventually(() => events.activities.length > 0, 'the call reported');
    expect(events.activities).toEqual([
      expect.objectContaining({ kind: 'call', callId: 'C3', from: PEER, rejected: true }),
    ]);
    expect(socket.sent.map((s) => s.content)).toEqual([{ text: 'Please write instead.' }]);
  });

  it('a rejection that fails reports the call as not rejected', async () => {
    h.engine = h.makeEngine({
      deviceSettings: () => ({
        rejectCalls: true,
        rejectCallsMessage: 'Please write instead.',
        proxy: null,
        historySync: 'recent' as const,
      }),
    });
    const { events, socket } = await h.online();
    socket.rejectCall = async () => {
      throw new Error('no answer');
    };
    socket.emit('call', [call('C4')]);
    await eventually(() => events.activities.length > 0, 'the call reported');
    expect(events.activities).toEqual([expect.objectContaining({ kind: 'call', callId: 'C4', rejected: false })]);
    expect(socket.sent).toEqual([]);
  });
});
