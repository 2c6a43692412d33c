/**
 * Managing chats on the sandbox over HTTP: archive, pin, mute, mark unread and read, delete and clear chats; star,
 * pin and delete messages for this account; the same changes made on the phone (POST /sandbox/…/chat-update)
 * as `chat.updated`, `chat.deleted`, `message.deleted`; filters of GET /chats; bad input; and the read models equal
 * after a rebuild. Real gateway, SQLite, HTTP, webhook receiver.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { allProjections } from '../../src/read-models.js';
import { type SandboxDevice, createDevice, goOffline, goOnline } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { TestClock } from '../support/test-clock.js';
import { TestReceiver } from '../webhooks/support/receiver.js';

const ALICE = '4915100027772';
const BOB = '4915100028884';
const CAROL = '4915100029996';
const DAN = '4915100021112';

describe('managing chats (sandbox)', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let alice: SandboxDevice;
  let receiver: TestReceiver;
  // A day ahead of the machine's time: a time to mute until is judged by the gateway's clock, not the machine's.
  const clock = new TestClock({ start: Date.now() + 86_400_000, running: true });

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, { clock });
    api = gateway.api;
    receiver = await TestReceiver.start();
    alice = await createDevice(api, 'alice', ALICE);
    await goOnline(api, alice);
    const hook = await api('PUT', `/devices/${alice.id}/hooks`, {
      deviceKey: alice.key,
      json: { url: `${receiver.url}/alice`, events: ['chat.updated', 'chat.deleted', 'message.deleted'] },
    });
    expect(hook.status).toBe(200);
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  const call = (method: string, path: string, json?: unknown) =>
    api(method, `/devices/${alice.id}${path}`, { deviceKey: alice.key, ...(json === undefined ? {} : { json }) });
  const inbound = async (from: string, body: string): Promise<string> => {
    const answer = await api('POST', `/sandbox/devices/${alice.id}/inbound`, { admin: true, json: { from, body } });
    expect(answer.status).toBe(202);
    const id = answer.body.waMessageId as string;
    await eventually(async () => ((await call('GET', `/messages/${id}`)).status === 200 ? true : undefined), id);
    return id;
  };
  const chatOf = async (chatId: string) =>
    (await call('GET', '/chats')).body.items.find((c: { chatId: string }) => c.chatId === chatId);
  const chatIds = async (query: string) =>
    (await call('GET', `/chats${query}`)).body.items.map((c: { chatId: string }) => c.chatId).sort();
  const webhook = (event: string, match: (data: any) => boolean) =>
    eventually(
      () => receiver.requests.find((r) => r.envelope.event === event && match(r.envelope.data))?.envelope,
      `webhook ${event}`,
    );

  it('archives, pins, mutes and marks a chat unread through the API; the chat view and filters show it', async () => {
    await inbound(BOB, 'hi from bob');
    await inbound(CAROL, 'hi from carol');
    const fresh = await chatOf(BOB);
    expect(fresh).toMatchObject({ archived: false, pinned: false, mutedUntil: null, unread: true, labels: [] });

    const muteUntil = new Date(clock.now() + 3_600_000).toISOString();
    const patched = await call('PATCH', `/chats/${BOB}`, { archived: true, pinned: true, muted: muteUntil });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ chatId: BOB, archived: true, pinned: true, mutedUntil: muteUntil });
    const hooked = await webhook('chat.updated', (d) => d.chatId === BOB && d.archived === true);
    expect(hooked.data).toEqual({
      deviceId: alice.id,
      chatId: BOB,
      archived: true,
      pinned: true,
      mutedUntil: muteUntil,
    });

    expect(await chatIds('?archived=true')).toEqual([BOB]);
    expect(await chatIds('?archived=false')).toEqual([CAROL]);
    expect(await chatIds('?pinned=true')).toEqual([BOB]);

    // Marked read as a whole: nothing unread; marked unread: unread again though every message was read.
    expect((await call('PATCH', `/chats/${CAROL}`, { unread: false })).body).toMatchObject({
      unread: false,
      unreadCount: 0,
    });
    expect(await chatIds('?unread=true')).toEqual([BOB]);
    expect((await call('PATCH', `/chats/${CAROL}`, { unread: true, muted: true })).body).toMatchObject({
      unread: true,
      mutedUntil: 'forever',
    });
    expect(await chatIds('?unread=true')).toEqual([BOB, CAROL]);
    expect((await call('PATCH', `/chats/${CAROL}`, { muted: false })).body.mutedUntil).toBeNull();
  });

  it('the same changes made on the phone arrive as chat.updated', async () => {
    const phone = await api('POST', `/sandbox/devices/${alice.id}/chat-update`, {
      admin: true,
      json: { chatId: BOB, archived: false, pinned: false, mutedUntil: null },
    });
    expect(phone.status).toBe(202);
    const hooked = await webhook('chat.updated', (d) => d.chatId === BOB && d.archived === false);
    expect(hooked.data).toEqual({ deviceId: alice.id, chatId: BOB, archived: false, pinned: false, mutedUntil: null });
    await eventually(async () => ((await chatOf(BOB))?.archived === false ? true : undefined), 'bob unarchived');
    expect(await chatOf(BOB)).toMatchObject({ archived: false, pinned: false, mutedUntil: null });
  });

  it('stars, pins and deletes messages for this account; the phone deletes one too', async () => {
    const first = await inbound(DAN, 'first');
    const second = await inbound(DAN, 'second');
    const third = await inbound(DAN, 'third');
    expect((await call('PUT', `/messages/${first}/star`)).body).toEqual({ waMessageId: first, starred: true });
    const pinned = await call('PUT', `/messages/${second}/pin`, { duration: '7d' });
    expect(pinned.status).toBe(200);
    expect(Date.parse(pinned.body.pinnedUntil) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    const shown = (await call('GET', `/chats/${DAN}/messages`)).body.items;
    expect(shown.find((m: any) => m.waMessageId === first)).toMatchObject({ starred: true, pinnedUntil: null });
    expect(shown.find((m: any) => m.waMessageId === second)).toMatchObject({
      starred: false,
      pinnedUntil: pinned.body.pinnedUntil,
    });
    expect((await call('DELETE', `/messages/${first}/star`)).body.starred).toBe(false);
    expect((await call('DELETE', `/messages/${second}/pin`)).body.pinnedUntil).toBeNull();
    expect((await call('GET', `/messages/${second}`)).body).toMatchObject({ starred: false, pinnedUntil: null });

    const deleted = await call('DELETE', `/messages/${first}?for=me`);
    expect(deleted.status).toBe(200);
    expect((await call('GET', `/messages/${first}`)).status).toBe(404);
    expect((await webhook('message.deleted', (d) => d.waMessageId === first)).data).toEqual({
      deviceId: alice.id,
      chatId: DAN,
      waMessageId: first,
    });
    // Done on the phone.
    const phone = await api('POST', `/sandbox/devices/${alice.id}/chat-update`, {
      admin: true,
      json: { chatId: DAN, deletedMessageIds: [third] },
    });
    expect(phone.status).toBe(202);
    await webhook('message.deleted', (d) => d.waMessageId === third);
    await eventually(
      async () => ((await call('GET', `/messages/${third}`)).status === 404 ? true : undefined),
      'third gone',
    );
    const left = (await call('GET', `/chats/${DAN}/messages`)).body.items.map((m: any) => m.waMessageId);
    expect(left).toEqual([second]);
  });

  it('clears a chat (kept, empty) and deletes one (gone until its next message)', async () => {
    const cleared = await call('POST', `/chats/${DAN}/clear`);
    expect(cleared.status).toBe(200);
    expect((await call('GET', `/chats/${DAN}/messages`)).body.items).toEqual([]);
    expect(await chatOf(DAN)).toMatchObject({ unreadCount: 0 });
    expect((await webhook('chat.deleted', (d) => d.chatId === DAN)).data).toEqual({
      deviceId: alice.id,
      chatId: DAN,
      cleared: true,
    });

    expect((await call('DELETE', `/chats/${CAROL}`)).body).toEqual({ chatId: CAROL, cleared: false });
    expect(await chatOf(CAROL)).toBeUndefined();
    const again = await inbound(CAROL, 'me again');
    expect((await chatOf(CAROL))?.lastMessage.waMessageId).toBe(again);
    expect((await call('GET', `/chats/${CAROL}/messages`)).body.items.map((m: any) => m.waMessageId)).toEqual([again]);

    // The phone deletes a chat.
    await api('POST', `/sandbox/devices/${alice.id}/chat-update`, {
      admin: true,
      json: { chatId: BOB, deleted: true },
    });
    await webhook('chat.deleted', (d) => d.chatId === BOB && d.cleared === false);
    await eventually(async () => ((await chatOf(BOB)) === undefined ? true : undefined), 'bob deleted');
  });

  it('bad input: unknown chat or message 404, wrong shape 400, offline 409; nothing changes', async () => {
    expect((await call('PATCH', '/chats/4915199990001', { archived: true })).body.code).toBe('chat_not_found');
    expect((await call('DELETE', '/chats/4915199990001')).status).toBe(404);
    expect((await call('POST', '/chats/4915199990001/clear')).status).toBe(404);
    expect((await call('PUT', '/messages/NOPE123/star')).body.code).toBe('message_not_found');
    expect((await call('PUT', '/messages/NOPE123/pin', { duration: '7d' })).status).toBe(404);
    expect((await call('DELETE', '/messages/NOPE123?for=me')).status).toBe(404);
    expect((await call('PATCH', `/chats/${CAROL}`, {})).status).toBe(400);
    expect((await call('PATCH', `/chats/${CAROL}`, { archived: 'yes' })).status).toBe(400);
    expect((await call('PATCH', `/chats/${CAROL}`, { muted: '2001-01-01T00:00:00Z' })).status).toBe(400);
    // In the future for the machine, past for the gateway's clock.
    const pastForTheGateway = new Date(Date.now() + 3_600_000).toISOString();
    expect((await call('PATCH', `/chats/${CAROL}`, { muted: pastForTheGateway })).status).toBe(400);
    expect((await call('PUT', '/messages/NOPE123/pin', { duration: '1y' })).status).toBe(400);
    expect((await call('DELETE', '/messages/NOPE123')).status).toBe(400);
    expect((await call('GET', '/chats?archived=maybe')).status).toBe(400);
    expect((await chatOf(CAROL))?.archived).toBe(false);

    await goOffline(api, alice);
    await eventually(
      async () => ((await call('GET', '/session/state')).body.state !== 'online' ? true : undefined),
      'offline',
    );
    const offline = await call('PATCH', `/chats/${CAROL}`, { archived: true });
    expect(offline.status).toBe(409);
    expect(offline.body.code).toBe('session_not_online');
    expect((await chatOf(CAROL))?.archived).toBe(false);
    await goOnline(api, alice);
  });

  it('rebuilding the read models from position 0 gives the same chats and messages', async () => {
    const db = openReadModelDb(gateway.dataDir);
    const dump = () =>
      Object.fromEntries(
        ['chat_messages', 'chats'].map((t) => [
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
    const log = pino({ level: 'silent' });
    const runner = new ProjectionRunner(gateway.store, db, allProjections(db, gateway.store, log), log);
    await runner.rebuild();
    await runner.stop();
    expect(dump()).toEqual(before);
    db.close();
  });
});
