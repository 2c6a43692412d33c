/**
 * Conversations from the log (GET /chats, /chats/:chatId/messages, /messages/:waMessageId) between sandbox
 * devices over HTTP: the whole life of a send, reactions, edits, revokes, quotes, media, unread counts,
 * key paging while messages arrive, and the read models equal after a rebuild. Real gateway, SQLite, HTTP.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { allProjections } from '../../src/read-models.js';
import { type SandboxDevice, createDevice, goOffline, goOnline } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';

const ALICE = '4915100017772';
const BOB = '4915100018884';
const DAVE = '4915100019996';
const STRANGER = '4917700012345';
const NOBODY = '4917700010000'; // sandbox: numbers ending in 0000 do not exist
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('conversations from the log', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let alice: SandboxDevice;
  let bob: SandboxDevice;
  let dave: SandboxDevice;

  beforeAll(async () => {
    gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      OUTBOX_SPACING: '0ms',
      OUTBOX_RATE_PER_MINUTE: '100000',
      OUTBOX_MAX_ATTEMPTS: '1',
      SANDBOX_DELIVERED_DELAY_MS: '10',
      SANDBOX_READ_DELAY_MS: '20',
    });
    api = gateway.api;
    alice = await createDevice(api, 'alice', ALICE);
    bob = await createDevice(api, 'bob', BOB);
    dave = await createDevice(api, 'dave', DAVE);
    for (const device of [alice, bob, dave]) await goOnline(api, device);
  });
  afterAll(async () => {
    await gateway.close();
  });

  const send = (device: SandboxDevice, kind: string, json: unknown) =>
    api('POST', `/devices/${device.id}/send/${kind}`, { deviceKey: device.key, json });
  const get = (device: SandboxDevice, path: string) =>
    api('GET', `/devices/${device.id}${path}`, { deviceKey: device.key });
  const message = (device: SandboxDevice, id: string) => get(device, `/messages/${id}`);
  const inbound = (device: SandboxDevice, json: Record<string, unknown>) =>
    api('POST', `/sandbox/devices/${device.id}/inbound`, { admin: true, json });

  it('a sent message: its whole life from queued, edits, reactions, a quoting reply and unread counts cleared by read receipts', async () => {
    const sent = await send(alice, 'text', { to: BOB, text: 'lunch?' });
    expect(sent.status).toBe(202);
    const id = sent.body.waMessageId as string;
    const read = await eventually(async () => {
      const answer = await message(alice, id);
      return answer.body.status === 'read' ? answer : undefined;
    }, 'alice sees her message read');
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      waMessageId: id,
      chatId: BOB,
      from: ALICE,
      fromMe: true,
      type: 'text',
      body: 'lunch?',
      outboxId: sent.body.outboxId,
      edited: false,
      revoked: false,
      reactions: [],
    });
    expect(read.body.statusHistory.map((s: { status: string }) => s.status)).toEqual([
      'queued',
      'sent',
      'delivered',
      'read',
    ]);
    expect(read.body.statusHistory[0].at).toBe(sent.body.createdAt);

    // Bob saw it: a chat with one unread message.
    const bobChats = await eventually(async () => {
      const answer = await get(bob, '/chats');
      return answer.body.items.find((c: { chatId: string }) => c.chatId === ALICE) ? answer : undefined;
    }, 'bob has a chat with alice');
    expect(bobChats.body.items[0]).toMatchObject({
      chatId: ALICE,
      isGroup: false,
      unreadCount: 1,
      lastMessage: { waMessageId: id, fromMe: false, type: 'text', body: 'lunch?' },
    });
    const received = await message(bob, id);
    expect(received.body).toMatchObject({ waMessageId: id, from: ALICE, fromMe: false, reactions: [] });
    expect(received.body.statusHistory).toBeUndefined();
    expect(received.body.outboxId).toBeUndefined();

    // Bob reacts and replies quoting it; Alice edits it.
    expect((await send(bob, 'reaction', { to: ALICE, messageId: id, emoji: '👍' })).status).toBe(202);
    const reply = await send(bob, 'text', { to: ALICE, text: 'yes!', replyTo: id });
    expect(reply.status).toBe(202);
    const edit = await api('PATCH', `/devices/${alice.id}/send/${id}`, {
      deviceKey: alice.key,
      json: { text: 'lunch at noon?' },
    });
    expect(edit.status).toBe(202);

    const edited = await eventually(async () => {
      const answer = await message(alice, id);
      return answer.body.edited && answer.body.reactions.length > 0 ? answer : undefined;
    }, 'alice sees the edit and the reaction');
    expect(edited.body).toMatchObject({
      body: 'lunch at noon?',
      edited: true,
      status: 'read',
      reactions: [{ from: BOB, fromMe: false, emoji: '👍' }],
    });
    expect(edited.body.statusHistory.map((s: { status: string }) => s.status)).toEqual([
      'queued',
      'sent',
      'delivered',
      'read',
      'edited',
    ]);
    const bobsView = await eventually(async () => {
      const answer = await message(bob, id);
      return answer.body.edited && answer.body.reactions.length > 0 ? answer : undefined;
    }, 'bob sees the edit and his own reaction');
    expect(bobsView.body).toMatchObject({
      body: 'lunch at noon?',
      reactions: [{ from: BOB, fromMe: true, emoji: '👍' }],
    });

    // Alice's chat with Bob, newest first: the reply quotes her message; the reaction is not listed.
    const page = await eventually(async () => {
      const answer = await get(alice, `/chats/${BOB}/messages`);
      return answer.body.items.length === 2 ? answer : undefined;
    }, 'two messages in the chat');
    expect(page.body.items.map((m: { waMessageId: string }) => m.waMessageId)).toEqual([reply.body.waMessageId, id]);
    expect(page.body.items[0]).toMatchObject({
      from: BOB,
      fromMe: false,
      body: 'yes!',
      quoted: { waMessageId: id, from: ALICE, type: 'text' },
    });
    expect(page.body.nextCursor).toBeNull();
    const aliceChats = await get(alice, '/chats');
    expect(aliceChats.body.items.find((c: { chatId: string }) => c.chatId === BOB)).toMatchObject({
      unreadCount: 1,
      lastMessage: { waMessageId: reply.body.waMessageId, fromMe: false },
    });

    // Bob's read receipts clear his unread count; sending does not.
    const bobChat = async () =>
      (await get(bob, '/chats')).body.items.find((c: { chatId: string }) => c.chatId === ALICE);
    expect(await bobChat()).toMatchObject({
      unreadCount: 1,
      lastMessage: { waMessageId: reply.body.waMessageId, fromMe: true },
    });
    const marked = await api('POST', `/devices/${bob.id}/chats/${ALICE}/read`, { deviceKey: bob.key, json: {} });
    expect(marked.body).toEqual({ read: 1 });
    expect((await bobChat()).unreadCount).toBe(0);
  });

  it('failed (with the error), cancelled and deleted sends; revoked messages lose their text', async () => {
    const failed = await send(alice, 'text', { to: NOBODY, text: 'anyone?' });
    const failure = await eventually(async () => {
      const answer = await message(alice, failed.body.waMessageId);
      return answer.body.status === 'failed' ? answer : undefined;
    }, 'the send to a number that does not exist fails');
    expect(failure.body.statusHistory).toEqual([
      { status: 'queued', at: failed.body.createdAt },
      { status: 'failed', at: expect.any(String), error: { code: 'recipient_not_found', message: expect.any(String) } },
    ]);

    const sent = await send(alice, 'text', { to: DAVE, text: 'oops' });
    await eventually(
      async () => ((await message(alice, sent.body.waMessageId)).body.status === 'read' ? true : undefined),
      'read',
    );
    expect(
      (await api('DELETE', `/devices/${alice.id}/send/${sent.body.waMessageId}`, { deviceKey: alice.key })).status,
    ).toBe(202);
    const deleted = await eventually(async () => {
      const answer = await message(alice, sent.body.waMessageId);
      return answer.body.status === 'deleted' ? answer : undefined;
    }, 'deleted');
    expect(deleted.body).toMatchObject({ revoked: true, body: '' });
    expect(deleted.body.statusHistory.at(-1).status).toBe('deleted');
    const davesCopy = await eventually(async () => {
      const answer = await message(dave, sent.body.waMessageId);
      return answer.body.revoked ? answer : undefined;
    }, 'dave sees it revoked');
    expect(davesCopy.body.body).toBe('');

    await goOffline(api, alice);
    try {
      const queued = await send(alice, 'text', { to: DAVE, text: 'never mind' });
      expect(
        (await api('DELETE', `/devices/${alice.id}/send/${queued.body.waMessageId}`, { deviceKey: alice.key })).status,
      ).toBe(200);
      const cancelled = await message(alice, queued.body.waMessageId);
      expect(cancelled.body.status).toBe('cancelled');
      expect(cancelled.body.statusHistory.map((s: { status: string }) => s.status)).toEqual(['queued', 'cancelled']);
    } finally {
      await goOnline(api, alice);
    }
  });

  it('received media are referenced; unknown messages are 404, bad cursors and chat ids 400', async () => {
    const got = await inbound(dave, {
      from: STRANGER,
      type: 'image',
      body: 'a dot',
      media: { base64: PNG.toString('base64'), mimetype: 'image/png' },
    });
    expect(got.status).toBe(202);
    const page = await eventually(async () => {
      const answer = await get(dave, `/chats/${STRANGER}/messages`);
      return answer.body.items.length === 1 ? answer : undefined;
    }, 'the image in the chat');
    expect(page.body.items[0]).toMatchObject({
      type: 'image',
      body: 'a dot',
      media: { mimetype: 'image/png', size: PNG.length, status: 'ready' },
    });
    expect(page.body.items[0].media.url).toContain(`/devices/${dave.id}/messages/`);

    const unknown = await message(dave, '3EB0000000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('message_not_found');
    expect((await get(dave, '/chats/4917700099999/messages')).body).toEqual({ items: [], nextCursor: null });
    for (const path of [
      `/chats?cursor=nope`,
      `/chats/${STRANGER}/messages?cursor=${Buffer.from('{"a":"x"}').toString('base64url')}`,
      '/chats/not-a-chat/messages',
      '/chats?limit=0',
      '/chats?limit=201',
      '/chats?extra=1',
    ]) {
      const answer = await get(dave, path);
      expect(answer.status, path).toBe(400);
      expect(answer.headers.get('content-type'), path).toContain('application/problem+json');
    }
    expect((await api('GET', `/devices/${dave.id}/chats`, {})).status).toBe(401);
    expect((await api('GET', `/devices/${dave.id}/chats`, { deviceKey: alice.key })).status).toBe(401);
  });

  it('key paging is stable while new messages arrive: every message once, newest first', async () => {
    const chat = '4917700054321';
    const before: string[] = [];
    for (let i = 0; i < 60; i++) {
      const answer = await inbound(dave, { from: chat, body: `m${i}` });
      expect(answer.status).toBe(202);
      before.push(answer.body.waMessageId);
    }
    let writing = true;
    const during: string[] = [];
    /** Resolves the wait for the writer's next message. */
    let wrote = () => undefined as void;
    const writer = (async () => {
      for (let i = 0; writing && i < 200; i++) {
        during.push((await inbound(dave, { from: chat, body: `new ${i}` })).body.waMessageId);
        wrote();
      }
    })().finally(() => {
      writing = false;
      wrote();
    });
    const seen: Array<{ waMessageId: string; timestamp: number }> = [];
    let cursor: string | null = null;
    let pages = 0;
    try {
      do {
        const answer = await get(dave, `/chats/${chat}/messages?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
        expect(answer.status).toBe(200);
        seen.push(...answer.body.items);
        cursor = answer.body.nextCursor;
        pages++;
        // The writer gets a message in between pages (until it has written all it writes).
        if (writing) await new Promise<void>((resolve) => (wrote = resolve));
      } while (cursor);
    } finally {
      writing = false;
      await writer;
    }
    expect(pages).toBeGreaterThan(8);
    const ids = seen.map((m) => m.waMessageId);
    expect(new Set(ids).size).toBe(ids.length); // none twice
    for (const id of before) expect(ids).toContain(id); // none missed
    for (const id of ids) expect([...before, ...during]).toContain(id);
    // Newest first: timestamps never rise down the pages.
    for (let i = 1; i < seen.length; i++) expect(seen[i].timestamp).toBeLessThanOrEqual(seen[i - 1].timestamp);
    // Paging chats too: every chat once.
    const chats: string[] = [];
    let chatCursor: string | null = null;
    do {
      const answer = await get(dave, `/chats?limit=1${chatCursor ? `&cursor=${chatCursor}` : ''}`);
      chats.push(...answer.body.items.map((c: { chatId: string }) => c.chatId));
      chatCursor = answer.body.nextCursor;
    } while (chatCursor);
    expect(new Set(chats).size).toBe(chats.length);
    expect(chats).toEqual(expect.arrayContaining([chat, STRANGER, ALICE]));
  });

  it('rebuilding every read model from position 0 gives the same conversations', async () => {
    await eventually(
      async () => ((await get(alice, '/outbox')).body.items.length === 0 ? true : undefined),
      'outboxes drained',
    );
    const db = openReadModelDb(gateway.dataDir);
    // Late receipts: every message sent has its last status (read, or it failed, was cancelled or deleted).
    await eventually(
      () =>
        db
          .prepare(
            "SELECT count(*) AS n FROM chat_messages WHERE from_me = 1 AND status NOT IN ('read', 'failed', 'cancelled', 'deleted')",
          )
          .pluck()
          .get() === 0,
      'every status final',
    );
    const dump = () =>
      Object.fromEntries(
        ['chat_messages', 'chats', 'chat_message_statuses'].map((t) => [
          t,
          db
            .prepare(`SELECT * FROM ${t}`)
            .all()
            .map((row) => JSON.stringify(row))
            .sort(),
        ]),
      );
    await gateway.webhooks.stop();
    const before = dump();
    expect(before.chats.length).toBeGreaterThan(4);
    const answers = await Promise.all([
      get(alice, '/chats'),
      get(bob, `/chats/${ALICE}/messages`),
      get(dave, '/chats'),
    ]);
    const log = pino({ level: 'silent' });
    const runner = new ProjectionRunner(gateway.store, db, allProjections(db, gateway.store, log), log);
    await runner.rebuild();
    await runner.stop();
    expect(dump()).toEqual(before);
    const again = await Promise.all([get(alice, '/chats'), get(bob, `/chats/${ALICE}/messages`), get(dave, '/chats')]);
    expect(again.map((a) => a.body)).toEqual(answers.map((a) => a.body));
    db.close();
  });
});
