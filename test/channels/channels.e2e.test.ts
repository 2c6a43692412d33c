/**
 * Channels (newsletters, API Part 3) with sandbox devices: create, read, follow, resolve by link, rename, mute,
 * unfollow; posts are sends through the outbox (`to: "<channelId>"`) that reach the followers' devices as
 * `channel.message` (never a chat, never `message.received`); the posts with their reaction counts, and a
 * follower's own reaction (PUT …/reaction); a rename by the owner reaching the followers' records live; and the
 * refusals (a subscriber posting or renaming: 403 not_channel_admin; an unknown channel: 404; bad shapes: 400).
 */
import { describe, expect, it } from 'vitest';
import { useSandboxWorld } from '../support/sandbox-world.js';
import type { TestDevice } from '../support/sessions.js';
import { eventually } from '../support/eventually.js';
import { channelsStream } from '../../src/channels/channel-events.js';
import { outboxStream } from '../../src/messages/message-events.js';

const ALICE = '4915100000031';
const BOB = '4915100000032';
const CAROL = '4915100000033';
const UNKNOWN = '120363999999999999@newsletter';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe('channels (sandbox)', () => {
  const world = useSandboxWorld({
    env: { SANDBOX_DELIVERED_DELAY_MS: '60000' },
    online: { alice: ALICE, bob: BOB, carol: CAROL },
    hookEvents: ['channel.message', 'channel.reaction', 'message.received'],
  });
  const { call, hooksOf } = world;
  const { alice, bob, carol } = world.devices;
  let channelId: string;
  let inviteLink: string;

  const chatIds = async (device: TestDevice) =>
    ((await call(device, 'GET', '/chats')).body.items as Array<{ chatId: string }>).map((c) => c.chatId);

  it('creates a channel the account owns, recorded before the answer and listed', async () => {
    const created = await call(alice, 'POST', '/channels', { name: 'Shop news', description: 'Offers' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      channelId: expect.stringMatching(/^\d+@newsletter$/),
      name: 'Shop news',
      description: 'Offers',
      role: 'owner',
      subscribers: 0,
      muted: false,
      inviteLink: expect.stringMatching(/^https:\/\/whatsapp\.com\/channel\/[A-Za-z0-9_-]+$/),
    });
    ({ channelId, inviteLink } = created.body as { channelId: string; inviteLink: string });
    const events = await world.gateway.store.readStream(channelsStream(alice.id));
    expect(events.map((e) => e.type)).toEqual(['ChannelRecorded']);
    expect((await call(alice, 'GET', '/channels')).body).toEqual({ items: [created.body] });
    expect((await call(alice, 'GET', `/channels/${channelId}`)).body).toEqual(created.body);
    // Not Bob's: he neither owns nor follows it.
    expect((await call(bob, 'GET', '/channels')).body).toEqual({ items: [] });
    expect((await call(bob, 'GET', `/channels/${channelId}`)).status).toBe(404);
  });

  it('resolves a link (or its code) to the channel; an unknown link is 404', async () => {
    const resolved = await call(bob, 'POST', '/channels/resolve', { link: inviteLink });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toEqual({
      channelId,
      name: 'Shop news',
      description: 'Offers',
      subscribers: 0,
      muted: false,
      inviteLink,
    });
    const code = inviteLink.split('/').pop()!;
    expect((await call(bob, 'POST', '/channels/resolve', { link: code })).body).toMatchObject({ channelId });
    const unknown = await call(bob, 'POST', '/channels/resolve', { link: 'https://whatsapp.com/channel/NoSuchCode' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
  });

  it('follows a channel once (following again records nothing); an unknown channel is 404', async () => {
    const followed = await call(bob, 'POST', `/channels/${channelId}/follow`);
    expect(followed.status).toBe(200);
    expect(followed.body).toMatchObject({ channelId, name: 'Shop news', role: 'subscriber', muted: false });
    expect((await call(bob, 'POST', `/channels/${channelId}/follow`)).status).toBe(200);
    expect((await world.gateway.store.readStream(channelsStream(bob.id))).map((e) => e.type)).toEqual([
      'ChannelRecorded',
    ]);
    expect(
      ((await call(bob, 'GET', '/channels')).body.items as Array<{ channelId: string }>).map((c) => c.channelId),
    ).toEqual([channelId]);
    const unknown = await call(bob, 'POST', `/channels/${UNKNOWN}/follow`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
  });

  it("posts text and images through the outbox; followers get channel.message, and no one's chats list the channel", async () => {
    const text = await call(alice, 'POST', '/send/text', { to: channelId, text: 'Sale on Sunday' });
    expect(text.status).toBe(202);
    const image = await call(alice, 'POST', '/send/image', { to: channelId, base64: PNG, caption: 'The poster' });
    expect(image.status).toBe(202);
    const queued = (await world.gateway.store.readStream(outboxStream(alice.id))).filter(
      (e) => e.type === 'OutboxMessageQueued',
    );
    expect(queued.map((e) => (e.data as { to: string }).to)).toEqual([channelId, channelId]);

    await world.receiver.waitUntil(() => hooksOf(bob, 'channel.message').length === 2);
    const [first, second] = hooksOf(bob, 'channel.message');
    expect(first).toEqual({
      deviceId: bob.id,
      channelId,
      waMessageId: text.body.waMessageId,
      type: 'text',
      body: 'Sale on Sunday',
      timestamp: expect.any(Number),
    });
    expect(second).toMatchObject({
      channelId,
      waMessageId: image.body.waMessageId,
      type: 'image',
      body: 'The poster',
      media: expect.objectContaining({ mimetype: 'image/png' }),
    });
    // Carol does not follow it; a post is never a message.received nor a chat.
    expect(hooksOf(carol, 'channel.message')).toEqual([]);
    expect(hooksOf(bob, 'message.received')).toEqual([]);
    expect(await chatIds(bob)).toEqual([]);
    expect(await chatIds(alice)).toEqual([]);
  });

  it("reads the channel's posts newest first with their reaction counts, page by page", async () => {
    const page = await call(alice, 'GET', `/channels/${channelId}/messages`);
    expect(page.status).toBe(200);
    const [image, text] = page.body.items as Array<{ waMessageId: string }>;
    // Bob, a follower, reacts through the API (and changes his mind); the others on the sandbox's network.
    const reactionPath = `/channels/${channelId}/messages/${text.waMessageId}/reaction`;
    const reacted = await call(bob, 'PUT', reactionPath, { emoji: '🎉' });
    expect(reacted.status).toBe(200);
    expect(reacted.body).toEqual({ channelId, waMessageId: text.waMessageId, emoji: '🎉' });
    expect((await call(bob, 'PUT', reactionPath, { emoji: '' })).status).toBe(200);
    expect((await call(bob, 'PUT', reactionPath, { emoji: '👍' })).status).toBe(200);
    const unknownPost = await call(bob, 'PUT', `/channels/${channelId}/messages/NOSUCHPOST/reaction`, { emoji: '👍' });
    expect(unknownPost.status).toBe(404);
    expect(unknownPost.body.code).toBe('not_found');
    expect(
      (await call(bob, 'PUT', `/channels/${UNKNOWN}/messages/${text.waMessageId}/reaction`, { emoji: '👍' })).status,
    ).toBe(404);
    for (const body of [{ emoji: 'ab' }, {}, { emoji: '👍', extra: 1 }]) {
      const refused = await call(bob, 'PUT', reactionPath, body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.code).toBe('invalid_request');
    }
    for (const [from, emoji] of [
      [CAROL, '👍'],
      [ALICE, '🎉'],
    ] as const) {
      const reacted = await world.gateway.api('POST', `/sandbox/devices/${alice.id}/channel-reaction`, {
        admin: true,
        json: { channelId, waMessageId: text.waMessageId, from, emoji },
      });
      expect(reacted.status).toBe(202);
    }
    const first = await call(bob, 'GET', `/channels/${channelId}/messages?limit=1`);
    expect(first.body).toEqual({
      items: [
        {
          waMessageId: image.waMessageId,
          type: 'image',
          body: 'The poster',
          timestamp: expect.any(Number),
          reactions: {},
        },
      ],
      nextCursor: expect.any(String),
    });
    const second = await call(
      bob,
      'GET',
      `/channels/${channelId}/messages?limit=1&cursor=${encodeURIComponent(first.body.nextCursor as string)}`,
    );
    expect(second.body).toEqual({
      items: [
        {
          waMessageId: text.waMessageId,
          type: 'text',
          body: 'Sale on Sunday',
          timestamp: expect.any(Number),
          reactions: { '👍': 2, '🎉': 1 },
        },
      ],
      nextCursor: null,
    });
    // Alice owns the channel: she hears of each reaction as it happens (Bob's through the API, Carol's on the network).
    await world.receiver.waitUntil(() => hooksOf(alice, 'channel.reaction').length === 5);
    const reaction = (emoji: string, removed = false) => ({
      deviceId: alice.id,
      channelId,
      waMessageId: text.waMessageId,
      emoji,
      removed,
    });
    expect(hooksOf(alice, 'channel.reaction')).toEqual([
      reaction('🎉'),
      reaction('', true),
      reaction('👍'),
      reaction('👍'),
      reaction('🎉'),
    ]);
    // Followers do not: reactions are the channel's admins' business.
    expect(hooksOf(bob, 'channel.reaction')).toEqual([]);
    expect((await call(bob, 'GET', `/channels/${channelId}/messages?cursor=not-a-cursor`)).status).toBe(400);
    expect((await call(bob, 'GET', `/channels/${UNKNOWN}/messages`)).status).toBe(404);
  });

  it('refuses a post or a rename by a subscriber or a stranger (403 not_channel_admin), nothing queued', async () => {
    const before = (await world.gateway.store.readStream(outboxStream(bob.id))).length;
    for (const device of [bob, carol]) {
      const posted = await call(device, 'POST', '/send/text', { to: channelId, text: 'me too' });
      expect(posted.status).toBe(403);
      expect(posted.body.code).toBe('not_channel_admin');
    }
    expect((await call(bob, 'POST', '/send/video', { to: channelId, base64: PNG })).body.code).toBe(
      'not_channel_admin',
    );
    expect((await world.gateway.store.readStream(outboxStream(bob.id))).length).toBe(before);
    const renamed = await call(bob, 'PATCH', `/channels/${channelId}`, { name: 'Mine now' });
    expect(renamed.status).toBe(403);
    expect(renamed.body.code).toBe('not_channel_admin');
    expect((await call(carol, 'PATCH', `/channels/${channelId}`, { muted: true })).status).toBe(404);
  });

  it('renames and describes (the owner), mutes (a follower); bad shapes are 400', async () => {
    const renamed = await call(alice, 'PATCH', `/channels/${channelId}`, { name: 'Shop', description: '' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ channelId, name: 'Shop', role: 'owner' });
    expect(renamed.body.description).toBeUndefined();
    expect((await call(bob, 'POST', '/channels/resolve', { link: inviteLink })).body.name).toBe('Shop');
    const muted = await call(bob, 'PATCH', `/channels/${channelId}`, { muted: true });
    expect(muted.status).toBe(200);
    expect(muted.body).toMatchObject({ channelId, role: 'subscriber', muted: true });
    expect((await call(bob, 'GET', `/channels/${channelId}`)).body.muted).toBe(true);
    // Bob's record learns the new name live: the network tells the followers (recorded on his channels stream).
    await eventually(
      async () => ((await call(bob, 'GET', `/channels/${channelId}`)).body.name === 'Shop' ? true : undefined),
      "Bob's channel renamed",
    );
    const told = (await world.gateway.store.readStream(channelsStream(bob.id))).filter(
      (e) => e.type === 'ChannelUpdated',
    );
    expect(told[0].data).toEqual({ deviceId: bob.id, channelId, name: 'Shop', description: '' });
    expect((await call(bob, 'GET', `/channels/${channelId}`)).body).toMatchObject({ role: 'subscriber', muted: true });
    expect((await call(bob, 'GET', `/channels/${channelId}`)).body.description).toBeUndefined();
    // And it stays so when his session comes online again (the channels are read again from the network).
    expect((await world.gateway.api('POST', `/sandbox/devices/${bob.id}/disconnect`, { admin: true })).status).toBe(
      202,
    );
    await eventually(
      async () => ((await call(bob, 'GET', '/session/state')).body.state === 'online' ? true : undefined),
      'Bob online again',
    );
    expect((await call(bob, 'GET', `/channels/${channelId}`)).body).toMatchObject({ name: 'Shop', muted: true });

    for (const [method, path, body] of [
      ['PATCH', `/channels/${channelId}`, {}],
      ['PATCH', `/channels/${channelId}`, { name: '' }],
      ['POST', '/channels', { name: '' }],
      ['POST', '/channels', { name: 'x'.repeat(101) }],
      ['POST', '/channels', { name: 'ok', owner: ALICE }],
      ['POST', '/channels/resolve', {}],
      ['GET', '/channels/not-a-channel', undefined],
      ['POST', '/send/audio', { to: channelId, base64: PNG }],
    ] as const) {
      const refused = await call(alice, method, path, body);
      expect(refused.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(refused.body.code).toBe('invalid_request');
    }
  });

  it('unfollows: the channel leaves the list and its posts no longer arrive', async () => {
    const left = await call(bob, 'DELETE', `/channels/${channelId}/follow`);
    expect(left.status).toBe(200);
    expect(left.body).toEqual({ channelId });
    expect((await call(bob, 'GET', '/channels')).body).toEqual({ items: [] });
    expect((await call(bob, 'GET', `/channels/${channelId}`)).status).toBe(404);
    expect((await call(bob, 'DELETE', `/channels/${channelId}/follow`)).status).toBe(200);

    // Carol follows now: the next post reaches her, not Bob.
    expect((await call(carol, 'POST', `/channels/${channelId}/follow`)).status).toBe(200);
    const posted = await call(alice, 'POST', '/send/text', { to: channelId, text: 'Last call' });
    await world.receiver.waitUntil(() => hooksOf(carol, 'channel.message').length === 1);
    expect(hooksOf(carol, 'channel.message')[0]).toMatchObject({ channelId, waMessageId: posted.body.waMessageId });
    expect(hooksOf(bob, 'channel.message')).toHaveLength(2);
  });
});
