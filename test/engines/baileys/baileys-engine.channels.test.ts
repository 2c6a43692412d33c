/**
 * The Baileys engine through a fake socket: channels (newsletters) mapped onto Baileys' newsletter calls; the
 * metadata read in WhatsApp's own shape (name and description in `thread_metadata`, role and mute in
 * `viewer_metadata`); a page of posts (a `<messages>` answer with real protobuf plaintext and reaction counts); a
 * post to a channel sent to its JID; and a post of a followed channel (a real protobuf) reported as an inbound
 * message of the channel, from the channel.
 */
import { type BinaryNode, type WAMessage, proto } from 'baileys';
import { describe, expect, it } from 'vitest';
import { useFakeSocketEngine } from './support/fake-socket-engine.js';
import { boom } from './support/fake-socket.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();
const CHANNEL = '120363000000000088@newsletter';

const real = (message: proto.IWebMessageInfo): WAMessage =>
  proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(message).finish()) as WAMessage;

/** WhatsApp's MEX answer to newsletterMetadata, as Baileys hands it on. */
const mexMetadata = (role: string, mute: string) => ({
  id: CHANNEL,
  state: { type: 'ACTIVE' },
  thread_metadata: {
    name: { text: 'Shop news' },
    description: { text: 'Offers' },
    invite: 'CODE88',
    subscribers_count: '42',
  },
  viewer_metadata: { mute, role },
});

const post = (id: string, t: number, message: proto.IMessage, reactions: Array<[string, number]>): BinaryNode => ({
  tag: 'message',
  attrs: { id, server_id: String(t), t: String(t), type: 'text' },
  content: [
    { tag: 'plaintext', attrs: {}, content: proto.Message.encode(message).finish() },
    {
      tag: 'reactions',
      attrs: {},
      content: reactions.map(([code, count]) => ({ tag: 'reaction', attrs: { code, count: String(count) } })),
    },
  ],
});

describe('Baileys engine (fake socket): channels', () => {
  it('creates, reads (WhatsApp’s shape), resolves, follows, changes and unfollows through the newsletter calls', async () => {
    const { connection, socket } = await h.online();
    const channels = connection.channels!;
    expect(await channels.create('Mine', 'About')).toEqual({
      channelId: '120363000000000077@newsletter',
      name: 'Mine',
      description: 'About',
      inviteCode: 'CODE77',
      subscribers: 0,
      muted: false,
    });
    socket.newsletters.set(CHANNEL, mexMetadata('SUBSCRIBER', 'ON'));
    socket.newsletters.set('CODE88', mexMetadata('GUEST', 'OFF'));
    expect(await channels.metadata(CHANNEL)).toEqual({
      channelId: CHANNEL,
      name: 'Shop news',
      description: 'Offers',
      inviteCode: 'CODE88',
      subscribers: 42,
      role: 'subscriber',
      muted: true,
    });
    // Not followed: no role.
    expect((await channels.resolve('CODE88'))?.role).toBeUndefined();
    expect(await channels.resolve('UNKNOWN')).toBeNull();
    await channels.follow(CHANNEL);
    await channels.update(CHANNEL, { name: 'News', description: '', muted: true });
    await channels.update(CHANNEL, { muted: false });
    await channels.unfollow(CHANNEL);
    expect(socket.newsletterCalls.map((c) => [c.method, ...c.args])).toEqual([
      ['newsletterCreate', 'Mine', 'About'],
      ['newsletterMetadata', 'jid', CHANNEL],
      ['newsletterMetadata', 'invite', 'CODE88'],
      ['newsletterMetadata', 'invite', 'UNKNOWN'],
      ['newsletterFollow', CHANNEL],
      ['newsletterUpdateName', CHANNEL, 'News'],
      ['newsletterUpdateDescription', CHANNEL, ''],
      ['newsletterMute', CHANNEL],
      ['newsletterUnmute', CHANNEL],
      ['newsletterUnfollow', CHANNEL],
    ]);
  });

  it('maps refusals: 403 is not_channel_admin, 404 channel_not_found (a metadata 404 is null)', async () => {
    const { connection, socket } = await h.online();
    socket.newsletterFailure = boom(403, 'forbidden', 403);
    await expect(connection.channels!.update(CHANNEL, { name: 'x' })).rejects.toMatchObject({
      code: 'not_channel_admin',
    });
    socket.newsletterFailure = boom(404, 'item-not-found', 404);
    await expect(connection.channels!.follow(CHANNEL)).rejects.toMatchObject({ code: 'channel_not_found' });
    socket.newsletterFailure = boom(404, 'item-not-found', 404);
    expect(await connection.channels!.metadata(CHANNEL)).toBeNull();
  });

  it('reads a page of posts (real protobufs) newest first with their reaction counts', async () => {
    const { connection, socket } = await h.online();
    socket.newsletterPage = {
      tag: 'iq',
      attrs: { type: 'result' },
      content: [
        {
          tag: 'messages',
          attrs: { jid: CHANNEL },
          content: [
            post('P1', 1_700_000_001, { conversation: 'Sale on Sunday' }, [
              ['👍', 12],
              ['🎉', 3],
            ]),
            post('P2', 1_700_000_002, { imageMessage: { mimetype: 'image/jpeg', caption: 'Poster' } }, []),
          ],
        },
      ],
    };
    expect(await connection.channels!.messages(CHANNEL, 10)).toEqual({
      items: [
        { waMessageId: 'P2', type: 'image', body: 'Poster', timestamp: 1_700_000_002, reactions: {} },
        {
          waMessageId: 'P1',
          type: 'text',
          body: 'Sale on Sunday',
          timestamp: 1_700_000_001,
          reactions: { '👍': 12, '🎉': 3 },
        },
      ],
    });
    expect(socket.newsletterCalls.at(-1)).toEqual({ method: 'newsletterFetchMessages', args: [CHANNEL, 10, 0, 0] });
  });

  it("sends a post to the channel's JID", async () => {
    const { connection, socket } = await h.online();
    await connection.send({ waMessageId: 'POST1', to: CHANNEL, content: { kind: 'text', text: 'Hello followers' } });
    expect(socket.sent).toHaveLength(1);
    expect(socket.sent[0]).toMatchObject({
      jid: CHANNEL,
      content: { text: 'Hello followers' },
      options: { messageId: 'POST1' },
    });
  });

  it("reports a followed channel's post (a real protobuf) as an inbound message of the channel; its own are not", async () => {
    const { events, socket } = await h.online();
    socket.emit('messages.upsert', {
      type: 'notify',
      messages: [
        real({
          key: { remoteJid: CHANNEL, fromMe: false, id: 'N1' },
          message: { conversation: 'New arrivals' },
          messageTimestamp: 1_700_000_010,
        }),
        real({
          key: { remoteJid: CHANNEL, fromMe: true, id: 'N2' },
          message: { conversation: 'posted from the phone' },
          messageTimestamp: 1_700_000_011,
        }),
        real({
          key: { remoteJid: CHANNEL, fromMe: false, id: 'N3' },
          message: { imageMessage: { mimetype: 'image/jpeg', caption: 'look', fileLength: 10 } },
          messageTimestamp: 1_700_000_012,
        }),
      ],
    });
    await eventually(() => events.inbounds.length === 2);
    expect(events.inbounds[0]).toMatchObject({
      waMessageId: 'N1',
      chatId: CHANNEL,
      from: CHANNEL,
      isGroup: false,
      fromMe: false,
      type: 'text',
      body: 'New arrivals',
    });
    expect(events.inbounds[0]).not.toHaveProperty('participant');
    expect(events.inbounds[1]).toMatchObject({
      waMessageId: 'N3',
      chatId: CHANNEL,
      from: CHANNEL,
      type: 'image',
      body: 'look',
    });
  });

  it('reacts to a post by its server id: learned from a page read, from a post received, or looked up among the newest', async () => {
    const { connection, events, socket } = await h.online();
    const channels = connection.channels!;
    socket.newsletterPage = {
      tag: 'iq',
      attrs: { type: 'result' },
      content: [
        { tag: 'messages', attrs: { jid: CHANNEL }, content: [post('P1', 1_700_000_001, { conversation: 'Hi' }, [])] },
      ],
    };
    // Not seen yet: the newest posts are read to find its server id (the fake's post() gives `t` as server_id).
    await channels.react(CHANNEL, 'P1', '👍');
    // A post received live names its server id in its key.
    socket.emit('messages.upsert', {
      type: 'notify',
      messages: [
        {
          ...real({
            key: { remoteJid: CHANNEL, fromMe: false, id: 'N1' },
            message: { conversation: 'New' },
            messageTimestamp: 1_700_000_020,
          }),
          key: { remoteJid: CHANNEL, fromMe: false, id: 'N1', server_id: '205' },
        },
      ],
    });
    await eventually(() => events.inbounds.length === 1);
    await channels.react(CHANNEL, 'N1', '🎉');
    await channels.react(CHANNEL, 'P1', '');
    await expect(channels.react(CHANNEL, 'NOPE', '👍')).rejects.toMatchObject({ code: 'channel_post_not_found' });
    expect(socket.newsletterCalls.map((c) => [c.method, ...c.args])).toEqual([
      ['newsletterFetchMessages', CHANNEL, 100, 0, 0],
      ['newsletterReactMessage', CHANNEL, '1700000001', '👍'],
      ['newsletterReactMessage', CHANNEL, '205', '🎉'],
      ['newsletterReactMessage', CHANNEL, '1700000001', undefined],
      ['newsletterFetchMessages', CHANNEL, 100, 0, 0],
    ]);
  });

  it('reports changes of followed channels made elsewhere: a new name or description, the account promoted or demoted, reactions', async () => {
    const { connection, events, socket } = await h.online();
    // WhatsApp's MEX shape, then Baileys' own (from a <notification type="newsletter"><update><settings>).
    socket.emit('newsletter-settings.update', { id: CHANNEL, update: { name: { text: 'Shop news 2' } } });
    socket.emit('newsletter-settings.update', { id: CHANNEL, update: { description: 'Weekly offers' } });
    // A picture change says nothing the gateway keeps.
    socket.emit('newsletter-settings.update', { id: CHANNEL, update: { picture: { id: '1' } } });
    socket.emit('newsletter-participants.update', {
      id: CHANNEL,
      author: '4915100000099@s.whatsapp.net',
      user: '4915100000001@s.whatsapp.net',
      new_role: 'ADMIN',
      action: 'promote',
    });
    // Someone else promoted: not this account's role.
    socket.emit('newsletter-participants.update', {
      id: CHANNEL,
      author: '4915100000099@s.whatsapp.net',
      user: '4915100000002@s.whatsapp.net',
      new_role: 'ADMIN',
      action: 'promote',
    });
    socket.emit('newsletter-participants.update', {
      id: CHANNEL,
      author: '4915100000099@s.whatsapp.net',
      user: '4915100000001@s.whatsapp.net',
      new_role: 'SUBSCRIBER',
      action: 'demote',
    });
    // Reactions name the post by its server id: a post this connection read is named by its waMessageId again.
    socket.newsletterPage = {
      tag: 'iq',
      attrs: { type: 'result' },
      content: [
        { tag: 'messages', attrs: { jid: CHANNEL }, content: [post('P1', 1_700_000_001, { conversation: 'Hi' }, [])] },
      ],
    };
    await connection.channels!.messages(CHANNEL, 10);
    socket.emit('newsletter.reaction', { id: CHANNEL, server_id: '1700000001', reaction: { code: '👍', count: 1 } });
    socket.emit('newsletter.reaction', { id: CHANNEL, server_id: 'OTHER', reaction: { removed: true } });
    // Neither an emoji nor taken back: nothing to tell.
    socket.emit('newsletter.reaction', { id: CHANNEL, server_id: 'OTHER', reaction: {} });
    await eventually(() => events.channelReports.length === 6);
    expect(events.channelReports).toEqual([
      { kind: 'settings', channelId: CHANNEL, name: 'Shop news 2' },
      { kind: 'settings', channelId: CHANNEL, description: 'Weekly offers' },
      { kind: 'role', channelId: CHANNEL, role: 'admin' },
      { kind: 'role', channelId: CHANNEL, role: 'subscriber' },
      { kind: 'reaction', channelId: CHANNEL, waMessageId: 'P1', emoji: '👍', removed: false },
      { kind: 'reaction', channelId: CHANNEL, waMessageId: 'OTHER', emoji: '', removed: true },
    ]);
  });
});
