/**
 * History sync on the sandbox (POST /sandbox/devices/:id/history): the account's history appears in its chats,
 * ordered by timestamp and marked `historical`, with `history.synced` and no `message.received`; a chunk sent
 * again records nothing; `historySync: none` imports nothing; the read models equal after a rebuild. Real
 * gateway, SQLite, HTTP, webhook receiver.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { allProjections } from '../../src/read-models.js';
import type { SandboxDevice } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { useHistoryWorld } from './support/history-world.js';

const ALICE = '4915100047772';
const OTHER = '4915100049994';
const BOB = '4915100048884';
const CAROL = '4915100043336';
const GROUP = '120363000000047001@g.us';

describe('history sync (sandbox)', () => {
  const world = useHistoryWorld({ alice: ALICE, other: OTHER });
  const { api } = world;
  const { alice, other } = world.devices;

  const get = (device: SandboxDevice, path: string) =>
    api('GET', `/devices/${device.id}${path}`, { deviceKey: device.key });
  const history = (device: SandboxDevice, json: unknown) =>
    api('POST', `/sandbox/devices/${device.id}/history`, { admin: true, json });
  const CHUNK = {
    chats: [
      {
        chatId: BOB,
        name: 'Bob',
        messages: [
          { waMessageId: 'HB2', body: 'second from bob', timestamp: 1_600_000_200 },
          { waMessageId: 'HB1', body: 'first from bob', timestamp: 1_600_000_100 },
          { waMessageId: 'HB3', fromMe: true, body: 'my answer', timestamp: 1_600_000_300 },
        ],
      },
      {
        chatId: GROUP,
        messages: [{ waMessageId: 'HG1', from: CAROL, type: 'image', body: 'a photo', timestamp: 1_600_000_050 }],
      },
    ],
    progress: 40,
    final: false,
  };
  const types = async (device: SandboxDevice) =>
    (await world.gateway.store.readStream(inboxStream(device.id))).map((e) => e.type);

  it('imports a chunk into its chats, ordered by timestamp, historical, with history.synced and no message.received', async () => {
    expect((await history(alice, CHUNK)).status).toBe(202);
    const synced = await eventually(
      () => world.receiver.requests.find((r) => r.envelope.event === 'history.synced')?.envelope,
      'history.synced',
    );
    expect(synced.data).toEqual({ deviceId: alice.id, chats: 2, messages: 4, progress: 40, final: false });
    const messages = (await get(alice, `/chats/${BOB}/messages`)).body.items;
    expect(messages.map((m: any) => m.waMessageId)).toEqual(['HB3', 'HB2', 'HB1']);
    expect(messages[0]).toMatchObject({ fromMe: true, from: ALICE, historical: true, body: 'my answer' });
    expect(messages[2]).toMatchObject({ from: BOB, fromMe: false, historical: true, timestamp: 1_600_000_100 });
    const group = (await get(alice, `/chats/${encodeURIComponent(GROUP)}/messages`)).body.items;
    expect(group).toEqual([
      expect.objectContaining({ waMessageId: 'HG1', from: CAROL, participant: CAROL, type: 'image', historical: true }),
    ]);
    const chats = (await get(alice, '/chats')).body.items;
    expect(chats.find((c: any) => c.chatId === BOB)).toMatchObject({
      name: 'Bob',
      unreadCount: 0,
      lastMessage: { waMessageId: 'HB3' },
    });
    expect(await types(alice)).not.toContain('MessageReceived');
    expect(world.receiver.requests.filter((r) => r.envelope.event === 'message.received')).toEqual([]);
  });

  it('a chunk sent again records nothing; a live message after it is not historical', async () => {
    const before = (await types(alice)).length;
    expect((await history(alice, CHUNK)).status).toBe(202);
    const live = await api('POST', `/sandbox/devices/${alice.id}/inbound`, {
      admin: true,
      json: { from: BOB, body: 'live now' },
    });
    await eventually(
      async () => ((await get(alice, `/messages/${live.body.waMessageId}`)).status === 200 ? true : undefined),
      'the live message',
    );
    // Only the live message was added: the chunk's events carry ids derived from it, taken already.
    expect((await types(alice)).length).toBe(before + 1);
    const page = (await get(alice, `/chats/${BOB}/messages`)).body.items;
    expect(page.map((m: any) => [m.waMessageId, m.historical])).toEqual([
      [live.body.waMessageId, false],
      ['HB3', true],
      ['HB2', true],
      ['HB1', true],
    ]);
    expect((await get(alice, '/chats')).body.items.find((c: any) => c.chatId === BOB).unreadCount).toBe(1);
  });

  it('a message without an id is one message whichever chunk and place it comes in; answered once recorded', async () => {
    const DAVE = '4915100045558';
    const first = { body: 'first from dave', timestamp: 1_600_000_400 };
    const second = { body: 'second from dave', timestamp: 1_600_000_500 };
    expect((await history(alice, { chats: [{ chatId: DAVE, messages: [first, second] }], final: false })).status).toBe(
      202,
    );
    const importedIds = async () =>
      (await world.gateway.store.readStream(inboxStream(alice.id)))
        .filter((e) => e.type === 'HistoryImported' && (e.data as { chatId?: string }).chatId === DAVE)
        .map((e) => (e.data as { waMessageId: string }).waMessageId);
    // Recorded when answered: the inbox holds the chunk already, no waiting for it.
    expect(await importedIds()).toHaveLength(2);
    expect((await history(alice, { chats: [{ chatId: DAVE, messages: [second] }], final: true })).status).toBe(202);
    const ids = await importedIds();
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(2);
  });

  it('historySync none: the device drops the history it is sent', async () => {
    const set = await api('PATCH', `/devices/${other.id}/settings`, {
      deviceKey: other.key,
      json: { historySync: 'none' },
    });
    expect(set.status).toBe(200);
    expect(set.body.historySync).toBe('none');
    expect((await history(other, CHUNK)).status).toBe(202);
    // A live message after it is recorded; the history never is.
    const live = await api('POST', `/sandbox/devices/${other.id}/inbound`, {
      admin: true,
      json: { from: BOB, body: 'after' },
    });
    await eventually(
      async () => ((await get(other, `/messages/${live.body.waMessageId}`)).status === 200 ? true : undefined),
      'the live message',
    );
    expect(await types(other)).toEqual(['MessageReceived']);
    expect((await get(other, '/settings')).body.historySync).toBe('none');
    expect((await get(alice, '/settings')).body.historySync).toBe('recent');
  });

  it('bad input: 400 for a wrong shape, 409 when offline is not possible to fake here: a wrong setting is 400', async () => {
    expect((await history(alice, { chats: [] })).status).toBe(400);
    expect((await history(alice, { chats: [{ chatId: BOB, messages: [{ body: 'no time' }] }] })).status).toBe(400);
    expect((await history(alice, { chats: [{ chatId: 'bob', messages: [] }] })).status).toBe(400);
    const wrong = await api('PATCH', `/devices/${alice.id}/settings`, {
      deviceKey: alice.key,
      json: { historySync: 'everything' },
    });
    expect(wrong.status).toBe(400);
  });

  it('rebuilding the read models from position 0 gives the same chats and messages', async () => {
    const db = openReadModelDb(world.gateway.dataDir);
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
    await world.gateway.webhooks.stop();
    const before = dump();
    const log = pino({ level: 'silent' });
    const runner = new ProjectionRunner(world.gateway.store, db, allProjections(db, world.gateway.store, log), log);
    await runner.rebuild();
    await runner.stop();
    expect(dump()).toEqual(before);
    db.close();
  });
});
