/**
 * Every message kind both ways, end to end between sandbox devices over HTTP: replies and mentions,
 * polls and their votes, read receipts, edits, stickers, contact cards, forwards, groups, presence,
 * calls and received media, with the webhooks a `"*"` hook gets. Real gateway, SQLite, HTTP, receiver.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { outboxStream } from '../../src/messages/message-events.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { type SandboxDevice, createDevice, goOffline, goOnline } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { TestReceiver } from '../webhooks/support/receiver.js';

const ALICE = '4915100007772';
const BOB = '4915100008884';
const CAROL = '4915100009996';
/** A 1×1 WebP (VP8L). */
const WEBP = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('every message kind, both ways (sandbox)', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let alice: SandboxDevice;
  let bob: SandboxDevice;
  let carol: SandboxDevice;
  let receiver: TestReceiver;

  beforeAll(async () => {
    gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      OUTBOX_SPACING: '0ms',
      OUTBOX_RATE_PER_MINUTE: '100000',
      SANDBOX_DELIVERED_DELAY_MS: '10',
      // Only explicit read receipts make a message read here.
      SANDBOX_READ_DELAY_MS: '3600000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    api = gateway.api;
    receiver = await TestReceiver.start();
    alice = await createDevice(api, 'alice', ALICE);
    bob = await createDevice(api, 'bob', BOB);
    carol = await createDevice(api, 'carol', CAROL);
    for (const device of [alice, bob, carol]) await goOnline(api, device);
    const hook = await api('PUT', `/devices/${bob.id}/hooks`, {
      deviceKey: bob.key,
      json: { url: `${receiver.url}/bob`, events: ['*'] },
    });
    expect(hook.status).toBe(200);
    expect(hook.body.events).toEqual(['*']);
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  const send = (device: SandboxDevice, kind: string, json: unknown) =>
    api('POST', `/devices/${device.id}/send/${kind}`, { deviceKey: device.key, json });
  const events = async (stream: string, type: string): Promise<any[]> =>
    (await gateway.store.readStream(stream)).filter((e: StoredEvent) => e.type === type).map((e) => e.data);
  const receivedBy = async (device: SandboxDevice, waMessageId: string) => {
    const received = await eventually(
      async () => (await events(inboxStream(device.id), 'MessageReceived')).find((m) => m.waMessageId === waMessageId),
      `${device.id} to receive ${waMessageId}`,
    );
    // The file shows a commit before its flush; the gateway's read models take it after (docs/architecture.md).
    await eventually(
      async () =>
        (await api('GET', `/devices/${device.id}/messages/${waMessageId}`, { deviceKey: device.key })).status === 200,
      `${waMessageId} in ${device.id}'s messages`,
    );
    return received;
  };
  const statusOf = async (device: SandboxDevice, waMessageId: string) =>
    (await events(outboxStream(device.id), 'MessageStatusChanged'))
      .filter((s) => s.waMessageId === waMessageId)
      .map((s) => s.status);
  const webhook = (event: string, match: (data: any) => boolean) =>
    eventually(
      () => receiver.requests.find((r) => r.envelope.event === event && match(r.envelope.data))?.envelope,
      `webhook ${event}`,
    );

  it('replies quote a message of the same chat and carry mentions; an unknown or foreign replyTo is 404 message_not_found', async () => {
    const first = await send(alice, 'text', { to: BOB, text: 'lunch?' });
    expect(first.status).toBe(202);
    await receivedBy(bob, first.body.waMessageId);
    const reply = await send(bob, 'text', {
      to: ALICE,
      text: `yes @${CAROL}`,
      replyTo: first.body.waMessageId,
      mentions: [CAROL],
    });
    expect(reply.status).toBe(202);
    const seen = await receivedBy(alice, reply.body.waMessageId);
    expect(seen).toMatchObject({
      from: BOB,
      chatId: BOB,
      isGroup: false,
      fromMe: false,
      body: `yes @${CAROL}`,
      quoted: { waMessageId: first.body.waMessageId, from: ALICE, type: 'text', body: 'lunch?' },
      mentions: [CAROL],
    });

    const unknown = await send(bob, 'text', { to: ALICE, text: 'x', replyTo: '3EB0000000000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('message_not_found');
    // A message of another chat cannot be quoted here.
    const foreign = await send(bob, 'text', { to: CAROL, text: 'x', replyTo: first.body.waMessageId });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('message_not_found');
    // The webhook of a reply carries the quote.
    const hooked = await webhook('message.status', (d) => d.waMessageId === reply.body.waMessageId);
    expect(hooked.deviceId).toBe(bob.id);
  });

  it('a poll sent by one is voted by the other: poll.vote names the options; the secret never leaves in a webhook', async () => {
    const poll = await send(alice, 'poll', {
      to: BOB,
      question: 'Pizza or pasta?',
      options: ['Pizza', 'Pasta', 'Both'],
      multipleAnswers: true,
    });
    expect(poll.status).toBe(202);
    expect(poll.body.kind).toBe('poll');
    const seen = await receivedBy(bob, poll.body.waMessageId);
    expect(seen).toMatchObject({
      type: 'poll',
      body: 'Pizza or pasta?',
      poll: { question: 'Pizza or pasta?', options: ['Pizza', 'Pasta', 'Both'], multipleAnswers: true },
    });
    expect(typeof seen.secret).toBe('string');
    const hooked = await webhook('message.received', (d) => d.waMessageId === poll.body.waMessageId);
    expect(hooked.data.poll.options).toEqual(['Pizza', 'Pasta', 'Both']);
    expect(hooked.data.secret).toBeUndefined();
    // The history view redacts it too.
    const history = await api('GET', `/devices/${bob.id}/events?limit=1000`, { admin: true });
    expect(JSON.stringify(history.body)).not.toContain(seen.secret);

    const vote = await api('POST', `/sandbox/devices/${alice.id}/inbound`, {
      admin: true,
      json: { from: BOB, type: 'poll_vote', pollMessageId: poll.body.waMessageId, selectedOptions: ['Pizza', 'Both'] },
    });
    expect(vote.status).toBe(202);
    const votes = await eventually(
      async () => (await events(inboxStream(alice.id), 'PollVoteReceived'))[0],
      'the vote',
    );
    expect(votes).toMatchObject({
      deviceId: alice.id,
      chatId: BOB,
      from: BOB,
      pollMessageId: poll.body.waMessageId,
      selectedOptions: ['Pizza', 'Both'],
    });
  });

  it('polls: duplicate options, more than 12, an empty question → 400, nothing queued', async () => {
    const before = (await events(outboxStream(alice.id), 'OutboxMessageQueued')).length;
    for (const body of [
      { to: BOB, question: 'q', options: ['a', 'a'] },
      { to: BOB, question: 'q', options: ['a ', 'a'] },
      { to: BOB, question: 'q', options: Array.from({ length: 13 }, (_, i) => `o${i}`) },
      { to: BOB, question: '', options: ['a', 'b'] },
      { to: BOB, question: '   ', options: ['a', 'b'] },
      { to: BOB, question: 'q', options: ['a'] },
    ]) {
      const answer = await send(alice, 'poll', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
    }
    expect((await events(outboxStream(alice.id), 'OutboxMessageQueued')).length).toBe(before);
  });

  it("read receipts of one make the other's messages read", async () => {
    const sent = await send(carol, 'text', { to: BOB, text: 'did you read this?' });
    await receivedBy(bob, sent.body.waMessageId);
    await eventually(async () => (await statusOf(carol, sent.body.waMessageId)).includes('delivered'), 'delivered');
    expect(await statusOf(carol, sent.body.waMessageId)).not.toContain('read');

    const read = await api('POST', `/devices/${bob.id}/chats/${CAROL}/read`, { deviceKey: bob.key, json: {} });
    expect(read.status).toBe(200);
    expect(read.body.read).toBe(1);
    await eventually(async () => (await statusOf(carol, sent.body.waMessageId)).includes('read'), 'read');
    expect(await events(inboxStream(bob.id), 'ChatRead')).toContainEqual(
      expect.objectContaining({ chatId: CAROL, waMessageIds: [sent.body.waMessageId] }),
    );
    // Nothing unread is left; naming a message of another chat is 404.
    expect(
      (await api('POST', `/devices/${bob.id}/chats/${CAROL}/read`, { deviceKey: bob.key, json: {} })).body.read,
    ).toBe(0);
    const wrong = await api('POST', `/devices/${bob.id}/chats/${ALICE}/read`, {
      deviceKey: bob.key,
      json: { messageIds: [sent.body.waMessageId] },
    });
    expect(wrong.status).toBe(404);
    expect(wrong.body.code).toBe('message_not_found');
    // Naming a message read already marks nothing.
    expect(
      (
        await api('POST', `/devices/${bob.id}/chats/${CAROL}/read`, {
          deviceKey: bob.key,
          json: { messageIds: [sent.body.waMessageId] },
        })
      ).body.read,
    ).toBe(0);
    // A reaction is shown on its message: it is not an unread message of its own, and gets no receipt.
    const again = await send(carol, 'text', { to: BOB, text: 'and this?' });
    await receivedBy(bob, again.body.waMessageId);
    const reaction = await api('POST', `/sandbox/devices/${bob.id}/inbound`, {
      admin: true,
      json: { from: CAROL, type: 'reaction', messageId: again.body.waMessageId, body: '❤️' },
    });
    await receivedBy(bob, reaction.body.waMessageId);
    const chats = (await api('GET', `/devices/${bob.id}/chats`, { deviceKey: bob.key })).body.items;
    expect(chats.find((c: { chatId: string }) => c.chatId === CAROL).unreadCount).toBe(1);
    const readBoth = await api('POST', `/devices/${bob.id}/chats/${CAROL}/read`, { deviceKey: bob.key, json: {} });
    expect(readBoth.body.read).toBe(1);
    expect((await events(inboxStream(bob.id), 'ChatRead')).at(-1).waMessageIds).toEqual([again.body.waMessageId]);
  });

  it('edits: a sent text within 15 minutes (202), a queued one in the outbox (200); others 409 not_editable, unknown 404', async () => {
    const sent = await send(alice, 'text', { to: BOB, text: 'see you at 5' });
    await eventually(async () => (await statusOf(alice, sent.body.waMessageId)).includes('sent'), 'sent');
    const edit = await api('PATCH', `/devices/${alice.id}/send/${sent.body.waMessageId}`, {
      deviceKey: alice.key,
      json: { text: 'see you at 6' },
    });
    expect(edit.status).toBe(202);
    expect(edit.body).toEqual({ status: 'editing' });
    const edited = await eventually(
      async () =>
        (await events(inboxStream(bob.id), 'MessageEdited')).find((e) => e.waMessageId === sent.body.waMessageId),
      'bob sees the edit',
    );
    expect(edited).toMatchObject({ chatId: ALICE, from: ALICE, body: 'see you at 6' });
    expect((await webhook('message.edited', (d) => d.waMessageId === sent.body.waMessageId)).data.body).toBe(
      'see you at 6',
    );

    // A message alice received is not hers to edit; an unknown one is 404.
    const theirs = (await events(inboxStream(alice.id), 'MessageReceived'))[0];
    const notMine = await api('PATCH', `/devices/${alice.id}/send/${theirs.waMessageId}`, {
      deviceKey: alice.key,
      json: { text: 'x' },
    });
    expect(notMine.status).toBe(409);
    expect(notMine.body.code).toBe('not_editable');
    const unknown = await api('PATCH', `/devices/${alice.id}/send/3EB0FFFFFFFFFFFFFFFFFF`, {
      deviceKey: alice.key,
      json: { text: 'x' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('message_not_found');
    // A location has no text to edit.
    const location = await send(alice, 'location', { to: BOB, latitude: 1, longitude: 2 });
    await eventually(async () => (await statusOf(alice, location.body.waMessageId)).includes('sent'), 'location sent');
    const noText = await api('PATCH', `/devices/${alice.id}/send/${location.body.waMessageId}`, {
      deviceKey: alice.key,
      json: { text: 'x' },
    });
    expect(noText.status).toBe(409);

    // Offline: the message waits in the outbox and is edited there.
    await goOffline(api, alice);
    const queued = await send(alice, 'text', { to: BOB, text: 'draft' });
    const inOutbox = await api('PATCH', `/devices/${alice.id}/send/${queued.body.waMessageId}`, {
      deviceKey: alice.key,
      json: { text: 'final' },
    });
    expect(inOutbox.status).toBe(200);
    expect(inOutbox.body).toEqual({ status: 'edited' });
    await goOnline(api, alice);
    expect((await receivedBy(bob, queued.body.waMessageId)).body).toBe('final');
  });

  it('revokes and edits reported by the network are events and webhooks', async () => {
    const revoke = await api('POST', `/sandbox/devices/${bob.id}/inbound`, {
      admin: true,
      json: { from: ALICE, type: 'revoke', messageId: '3EB0AB0000000000000001' },
    });
    expect(revoke.status).toBe(202);
    const hooked = await webhook('message.revoked', (d) => d.waMessageId === '3EB0AB0000000000000001');
    expect(hooked.data).toMatchObject({ chatId: ALICE, from: ALICE, timestamp: expect.any(Number) });
  });

  it('an edit, revoke or reaction from someone else, or naming a message of another chat, changes nothing shown', async () => {
    const STRANGER = '4915177777777';
    const mine = await send(bob, 'text', { to: ALICE, text: 'your refund is 10 EUR' });
    await eventually(async () => (await statusOf(bob, mine.body.waMessageId)).includes('sent'), 'sent');
    const fromAlice = await api('POST', `/sandbox/devices/${bob.id}/inbound`, {
      admin: true,
      json: { from: ALICE, body: 'see you' },
    });
    await receivedBy(bob, fromAlice.body.waMessageId);
    const inject = (json: Record<string, unknown>) =>
      api('POST', `/sandbox/devices/${bob.id}/inbound`, { admin: true, json });
    // A stranger (another chat) and alice herself (bob's own message) name messages that are not theirs to change.
    for (const [from, target] of [
      [STRANGER, mine.body.waMessageId],
      [ALICE, mine.body.waMessageId],
      [STRANGER, fromAlice.body.waMessageId],
    ] as const) {
      expect((await inject({ from, type: 'edit', messageId: target, body: 'your refund is 10000 EUR' })).status).toBe(
        202,
      );
      expect((await inject({ from, type: 'revoke', messageId: target })).status).toBe(202);
    }
    expect(
      (await inject({ from: STRANGER, type: 'reaction', messageId: mine.body.waMessageId, body: '💸' })).status,
    ).toBe(202);
    // Alice may change her own message, and react in her chat; these come after the forged ones in bob's log.
    expect(
      (await inject({ from: ALICE, type: 'edit', messageId: fromAlice.body.waMessageId, body: 'see you soon' })).status,
    ).toBe(202);
    expect((await inject({ from: ALICE, type: 'reaction', messageId: mine.body.waMessageId, body: '👍' })).status).toBe(
      202,
    );
    const view = (id: string) => api('GET', `/devices/${bob.id}/messages/${id}`, { deviceKey: bob.key });
    await eventually(
      async () => (await view(fromAlice.body.waMessageId)).body.body === 'see you soon',
      "alice's own edit",
    );
    await eventually(async () => (await view(mine.body.waMessageId)).body.reactions.length === 1, "alice's reaction");
    const own = (await view(mine.body.waMessageId)).body;
    expect(own).toMatchObject({
      body: 'your refund is 10 EUR',
      edited: false,
      revoked: false,
      reactions: [{ from: ALICE, emoji: '👍' }],
    });
    expect(own.statusHistory.map((s: { status: string }) => s.status)).not.toContain('edited');
    expect((await view(fromAlice.body.waMessageId)).body).toMatchObject({
      body: 'see you soon',
      edited: true,
      revoked: false,
    });
  });

  it('stickers must be WebP (415 otherwise); contact cards arrive as sent, with injected newlines escaped in the vCard', async () => {
    const png = await send(alice, 'sticker', { to: BOB, base64: PNG.toString('base64') });
    expect(png.status).toBe(415);
    expect(png.body.code).toBe('unsupported_media_type');
    const declared = await send(alice, 'sticker', { to: BOB, base64: WEBP.toString('base64'), mimetype: 'image/png' });
    expect(declared.status).toBe(415);
    const sticker = await send(alice, 'sticker', { to: BOB, base64: WEBP.toString('base64') });
    expect(sticker.status).toBe(202);
    const received = await receivedBy(bob, sticker.body.waMessageId);
    expect(received).toMatchObject({ type: 'sticker', media: { mimetype: 'image/webp', status: 'ready' } });

    const cards = [
      { name: 'Eve\nTEL:+1999', phone: '+49 151 0000 1111', organization: 'ACME; Inc', email: 'eve@example.com' },
    ];
    const contact = await send(alice, 'contact', { to: BOB, contacts: cards });
    expect(contact.status).toBe(202);
    expect((await receivedBy(bob, contact.body.waMessageId)).contacts).toEqual(cards);
  });

  it('forwards a received image as it is, media included', async () => {
    const bytes = Buffer.concat([PNG, Buffer.alloc(10_000, 7)]);
    const inbound = await api('POST', `/sandbox/devices/${bob.id}/inbound`, {
      admin: true,
      json: {
        from: CAROL,
        type: 'image',
        body: 'a photo',
        media: { base64: bytes.toString('base64'), mimetype: 'image/png', filename: 'p.png' },
      },
    });
    expect(inbound.status).toBe(202);
    const received = await receivedBy(bob, inbound.body.waMessageId);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(received.media).toEqual({
      mimetype: 'image/png',
      size: bytes.length,
      filename: 'p.png',
      sha256,
      status: 'ready',
      url: `/devices/bob/messages/${inbound.body.waMessageId}/media`,
    });
    const webhookData = (await webhook('message.received', (d) => d.waMessageId === inbound.body.waMessageId)).data;
    // The media URL works by the time the webhook arrives.
    const media = await fetch(`${gateway.url}${webhookData.media.url}`, { headers: { 'x-device-key': bob.key } });
    expect(media.status).toBe(200);
    expect(media.headers.get('content-type')).toBe('image/png');
    expect(media.headers.get('content-length')).toBe(String(bytes.length));
    expect(media.headers.get('content-disposition')).toBe('attachment; filename="p.png"');
    expect(Buffer.from(await media.arrayBuffer()).equals(bytes)).toBe(true);

    const forward = await send(bob, 'forward', { to: ALICE, messageId: inbound.body.waMessageId });
    expect(forward.status).toBe(202);
    expect(forward.body.kind).toBe('forward');
    const atAlice = await receivedBy(alice, forward.body.waMessageId);
    expect(atAlice).toMatchObject({
      type: 'image',
      body: 'a photo',
      media: { sha256, size: bytes.length, status: 'ready' },
    });
    const unknown = await send(bob, 'forward', { to: ALICE, messageId: '3EB0000000000000000099' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('message_not_found');

    // Media of a message without any, and of an unknown message.
    const text = (await events(inboxStream(bob.id), 'MessageReceived')).find((m) => m.type === 'text');
    expect(
      (await api('GET', `/devices/${bob.id}/messages/${text.waMessageId}/media`, { deviceKey: bob.key })).status,
    ).toBe(404);
    const none = await api('GET', `/devices/${bob.id}/messages/3EB0000000000000000098/media`, { deviceKey: bob.key });
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('message_not_found');
  });

  it("a group's messages reach its sandbox members with chatId, isGroup and participant", async () => {
    const group = await api('POST', '/sandbox/groups', {
      admin: true,
      json: { subject: 'Team', members: [ALICE, BOB, CAROL] },
    });
    expect(group.status).toBe(201);
    expect(group.body.groupId).toMatch(/^120363\d{12}@g\.us$/);
    const sent = await send(alice, 'text', { to: group.body.groupId, text: 'hello team', mentions: [BOB] });
    expect(sent.status).toBe(202);
    for (const member of [bob, carol]) {
      expect(await receivedBy(member, sent.body.waMessageId)).toMatchObject({
        chatId: group.body.groupId,
        isGroup: true,
        from: ALICE,
        participant: ALICE,
        body: 'hello team',
        mentions: [BOB],
      });
    }
    expect(
      (await events(inboxStream(alice.id), 'MessageReceived')).some((m) => m.waMessageId === sent.body.waMessageId),
    ).toBe(false);
    // A reply in the group quotes it.
    const reply = await send(bob, 'text', { to: group.body.groupId, text: 'hi', replyTo: sent.body.waMessageId });
    expect(reply.status).toBe(202);
    expect((await receivedBy(carol, reply.body.waMessageId)).quoted).toMatchObject({
      waMessageId: sent.body.waMessageId,
      from: ALICE,
    });
    // An @lid id is accepted as `to`; a malformed chat id is not.
    expect((await send(alice, 'text', { to: '123456789012345@lid', text: 'x' })).status).toBe(202);
    expect((await send(alice, 'text', { to: '1203@g.us', text: 'x' })).status).toBe(400);
  });

  it('presence and calls: sent at once (409 when offline), received as presence.update and call.received', async () => {
    const typing = await api('POST', `/devices/${alice.id}/chats/${BOB}/presence`, {
      deviceKey: alice.key,
      json: { state: 'typing' },
    });
    expect(typing.status).toBe(200);
    expect((await webhook('presence.update', (d) => d.from === ALICE)).data).toMatchObject({
      chatId: ALICE,
      from: ALICE,
      state: 'typing',
    });
    expect(
      (await api('POST', `/devices/${alice.id}/presence`, { deviceKey: alice.key, json: { state: 'available' } }))
        .status,
    ).toBe(200);
    expect(
      (await api('POST', `/devices/${alice.id}/presence`, { deviceKey: alice.key, json: { state: 'typing' } })).status,
    ).toBe(400);

    const presence = await api('POST', `/sandbox/devices/${bob.id}/presence`, {
      admin: true,
      json: { from: CAROL, state: 'recording' },
    });
    expect(presence.status).toBe(202);
    expect((await webhook('presence.update', (d) => d.from === CAROL)).data).toMatchObject({
      chatId: CAROL,
      state: 'recording',
    });
    const call = await api('POST', `/sandbox/devices/${bob.id}/call`, {
      admin: true,
      json: { from: CAROL, isVideo: true },
    });
    expect(call.status).toBe(202);
    expect((await webhook('call.received', (d) => d.callId === call.body.callId)).data).toMatchObject({
      from: CAROL,
      isVideo: true,
      isGroup: false,
      rejected: false,
    });

    await goOffline(api, carol);
    const offline = await api('POST', `/devices/${carol.id}/chats/${BOB}/presence`, {
      deviceKey: carol.key,
      json: { state: 'typing' },
    });
    expect(offline.status).toBe(409);
    expect(offline.body.code).toBe('session_not_online');
    const readOffline = await api('POST', `/devices/${carol.id}/chats/${BOB}/read`, { deviceKey: carol.key, json: {} });
    expect(readOffline.status).toBe(409);
    await goOnline(api, carol);
  });

  it('bad input is a 4xx problem, never a 5xx, and queues nothing', async () => {
    const before = (await events(outboxStream(alice.id), 'OutboxMessageQueued')).length;
    const checks: Array<[string, string, unknown, number]> = [
      ['POST', `/devices/${alice.id}/chats/not-a-chat/read`, {}, 400],
      ['POST', `/devices/${alice.id}/chats/${BOB}/read`, { messageIds: [] }, 400],
      ['POST', `/devices/${alice.id}/chats/${BOB}/presence`, { state: 'dancing' }, 400],
      ['PATCH', `/devices/${alice.id}/send/3EB0000000000000000001`, { text: '' }, 400],
      [
        'POST',
        `/devices/${alice.id}/send/text`,
        { to: BOB, text: 'x', mentions: Array.from({ length: 257 }, (_, i) => String(4915100000000 + i)) },
        400,
      ],
      ['POST', `/devices/${alice.id}/send/text`, { to: BOB, text: 'x', mentions: ['not a number'] }, 400],
      [
        'POST',
        `/devices/${alice.id}/send/contact`,
        { to: BOB, contacts: Array.from({ length: 11 }, () => ({ name: 'a', phone: '49151000111' })) },
        400,
      ],
      ['POST', `/devices/${alice.id}/send/contact`, { to: BOB, contacts: [{ name: 'a', phone: 'call me' }] }, 400],
      ['POST', `/devices/${alice.id}/send/forward`, { to: BOB }, 400],
      [
        'POST',
        `/devices/${alice.id}/send/sticker`,
        { to: BOB, base64: Buffer.alloc(1024 * 1024 + 1, 1).toString('base64') },
        413,
      ],
      ['POST', `/sandbox/devices/${alice.id}/inbound`, { from: BOB, type: 'image', body: 'no media' }, 400],
      ['POST', `/sandbox/devices/${alice.id}/inbound`, { from: BOB, type: 'poll_vote' }, 400],
      [
        'POST',
        `/sandbox/devices/${alice.id}/inbound`,
        { from: BOB, type: 'image', media: { base64: '!!!', mimetype: 'image/png' } },
        400,
      ],
    ];
    for (const [method, path, json, status] of checks) {
      const answer = await api(method, path, { admin: true, json });
      expect(
        answer.status,
        `${method} ${path} ${JSON.stringify(json).slice(0, 80)}: ${JSON.stringify(answer.body)}`,
      ).toBe(status);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
    }
    expect((await events(outboxStream(alice.id), 'OutboxMessageQueued')).length).toBe(before);
  });
});
