/**
 * On-demand history on the sandbox (POST /devices/:id/chats/:chatId/history): the phone is asked for messages older
 * than the oldest one the gateway holds; they arrive as history (historical, `history.synced`, no
 * `message.received`), older each time it is asked again, also with `historySync: none`; unknown chat 404, offline
 * 409, wrong body 400. Real gateway, SQLite, HTTP, webhook receiver.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { type SandboxDevice, goOffline, stateOf } from '../outbox/support/sandbox-devices.js';
import { eventually } from '../support/eventually.js';
import { useHistoryWorld } from './support/history-world.js';

const ALICE = '4915100057772';
const OTHER = '4915100059994';
const BOB = '4915100058884';
const CAROL = '4915100053336';
const GROUP = '120363000000057001@g.us';

describe('on-demand history (sandbox)', () => {
  const world = useHistoryWorld({ alice: ALICE, other: OTHER });
  const { api } = world;
  const { alice, other } = world.devices;
  beforeAll(async () => {
    const linked = {
      chats: [
        {
          chatId: BOB,
          messages: [
            { waMessageId: 'HB2', body: 'second', timestamp: 1_600_000_200 },
            { waMessageId: 'HB1', body: 'first', timestamp: 1_600_000_100 },
          ],
        },
        { chatId: GROUP, messages: [{ waMessageId: 'HG1', from: CAROL, body: 'hi team', timestamp: 1_600_000_500 }] },
      ],
    };
    for (const device of [alice, other])
      expect((await api('POST', `/sandbox/devices/${device.id}/history`, { admin: true, json: linked })).status).toBe(
        202,
      );
  });

  const get = (device: SandboxDevice, path: string) =>
    api('GET', `/devices/${device.id}${path}`, { deviceKey: device.key });
  const fetchHistory = (device: SandboxDevice, chatId: string, json: unknown) =>
    api('POST', `/devices/${device.id}/chats/${encodeURIComponent(chatId)}/history`, { deviceKey: device.key, json });
  const page = async (device: SandboxDevice, chatId: string) =>
    (await get(device, `/chats/${encodeURIComponent(chatId)}/messages?limit=200`)).body.items as Array<{
      waMessageId: string;
      from: string;
      fromMe: boolean;
      historical: boolean;
      timestamp: number;
      participant?: string;
    }>;
  const pageOf = (device: SandboxDevice, chatId: string, length: number) =>
    eventually(async () => {
      const items = await page(device, chatId);
      return items.length === length ? items : undefined;
    }, `${length} messages in ${chatId}`);

  it("asks the phone for older messages than the chat's oldest; they arrive as history, older each time", async () => {
    const asked = await fetchHistory(alice, BOB, { count: 3 });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    expect(asked.body).toEqual({ chatId: BOB, count: 3, before: { waMessageId: 'HB1', timestamp: 1_600_000_100 } });
    const items = await pageOf(alice, BOB, 5);
    expect(items.slice(0, 2).map((m) => m.waMessageId)).toEqual(['HB2', 'HB1']);
    // One a minute before the oldest, from the contact and from the account in turn.
    expect(items.slice(2).map((m) => [m.timestamp, m.from, m.fromMe, m.historical])).toEqual([
      [1_600_000_040, BOB, false, true],
      [1_599_999_980, ALICE, true, true],
      [1_599_999_920, BOB, false, true],
    ]);
    const synced = await eventually(
      () =>
        world.receiver.requests.find(
          // The sync at link time held two chats.
          (r) => r.envelope.event === 'history.synced' && (r.envelope.data as { chats: number }).chats === 1,
        )?.envelope,
      'history.synced of the answer',
    );
    expect(synced.data).toEqual({ deviceId: alice.id, chats: 1, messages: 3, progress: 100, final: true });

    // Asked again, it starts from the oldest message now held.
    const again = await fetchHistory(alice, BOB, { count: 2 });
    expect(again.body.before).toEqual({ waMessageId: items[4].waMessageId, timestamp: 1_599_999_920 });
    const more = await pageOf(alice, BOB, 7);
    expect(more.slice(5).map((m) => m.timestamp)).toEqual([1_599_999_860, 1_599_999_800]);

    const inbox = await world.gateway.store.readStream(inboxStream(alice.id));
    expect(inbox.filter((e) => e.type === 'HistoryImported')).toHaveLength(2 + 1 + 3 + 2);
    expect(inbox.map((e) => e.type)).not.toContain('MessageReceived');
    expect(world.receiver.requests.filter((r) => r.envelope.event === 'message.received')).toEqual([]);
  });

  it('a group: the older messages come from the members the gateway knows', async () => {
    expect((await fetchHistory(alice, GROUP, { count: 2 })).status).toBe(202);
    const items = await pageOf(alice, GROUP, 3);
    expect(items.map((m) => [m.timestamp, m.from, m.fromMe, m.participant])).toEqual([
      [1_600_000_500, CAROL, false, CAROL],
      [1_600_000_440, CAROL, false, CAROL],
      [1_600_000_380, ALICE, true, undefined],
    ]);
  });

  it('answered with historySync none too: this history was asked for', async () => {
    const set = await api('PATCH', `/devices/${other.id}/settings`, {
      deviceKey: other.key,
      json: { historySync: 'none' },
    });
    expect(set.status).toBe(200);
    expect((await fetchHistory(other, BOB, { count: 1 })).status).toBe(202);
    expect((await pageOf(other, BOB, 3))[2]).toMatchObject({ timestamp: 1_600_000_040, historical: true });
  });

  it('unknown chat 404, wrong body 400, not online 409', async () => {
    const unknown = await fetchHistory(alice, '4915100050000', { count: 5 });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'chat_not_found']);
    for (const body of [{}, { count: 0 }, { count: 501 }, { count: 1.5 }, { count: '5' }, { count: 5, since: 1 }])
      expect((await fetchHistory(alice, BOB, body)).status, JSON.stringify(body)).toBe(400);
    expect((await fetchHistory(alice, 'bob', { count: 5 })).status).toBe(400);
    await goOffline(api, other);
    await eventually(async () => (await stateOf(api, other)) !== 'online', 'other offline');
    const offline = await fetchHistory(other, BOB, { count: 5 });
    expect([offline.status, offline.body.code]).toEqual([409, 'session_not_online']);
  });
});
