/**
 * On-demand history of a Baileys device (fake socket, real WebMessageInfo protobufs): POST /chats/:chatId/history
 * asks Baileys' fetchMessageHistory from the chat's oldest message held (its key, its time in ms), and the phone's
 * ON_DEMAND answer (`messaging-history.set`) is imported into the chat as history, final, with no message.received;
 * a chat the gateway does not hold is 404.
 */
import { type WAMessage, proto } from 'baileys';
import { beforeAll, describe, expect, it } from 'vitest';
import { inboxStream } from '../../../src/inbox/inbox-events.js';
import { useFakeSocketGateway } from './support/fake-socket-gateway.js';
import { eventually } from '../../support/eventually.js';

const ADA = '4915112345678';
const ADA_JID = `${ADA}@s.whatsapp.net`;
const GROUP = '120363000000000088@g.us';
const MEMBER = '4915198765432';
const { HistorySyncType } = proto.HistorySync;

const message = (value: Record<string, unknown>) => proto.WebMessageInfo.fromObject(value) as WAMessage;

describe('on-demand history of a Baileys device (fake socket)', () => {
  const deviceId = 'wa-history';
  const world = useFakeSocketGateway(deviceId);
  const { sockets, get } = world;
  beforeAll(async () => {
    // The history WhatsApp sent when the device linked.
    sockets.latest().ev.emit('messaging-history.set', {
      chats: [
        { id: ADA_JID, name: 'Ada' },
        { id: GROUP, name: 'Team' },
      ],
      contacts: [],
      messages: [
        message({
          key: { remoteJid: ADA_JID, id: 'L2', fromMe: true },
          messageTimestamp: 1_700_000_060,
          message: { conversation: 'my answer' },
        }),
        message({
          key: { remoteJid: ADA_JID, id: 'L1', fromMe: false },
          messageTimestamp: 1_700_000_000,
          message: { conversation: 'hello' },
        }),
        message({
          key: { remoteJid: GROUP, id: 'G1', fromMe: false, participant: `${MEMBER}@s.whatsapp.net` },
          messageTimestamp: 1_700_000_100,
          message: { conversation: 'hi team' },
        }),
      ],
      syncType: HistorySyncType.INITIAL_BOOTSTRAP,
      chunkOrder: 1,
      isLatest: true,
    });
    await eventually(async () => ((await page(ADA)).length === 2 ? true : undefined), 'the linked history');
  });

  const page = async (chatId: string) =>
    (await get(`/chats/${encodeURIComponent(chatId)}/messages`)).body.items as Array<{
      waMessageId: string;
      historical: boolean;
      fromMe: boolean;
    }>;
  const fetchHistory = (chatId: string, count: number) =>
    world.gateway.api('POST', `/devices/${deviceId}/chats/${encodeURIComponent(chatId)}/history`, {
      deviceKey: world.key,
      json: { count },
    });

  it("asks fetchMessageHistory from the chat's oldest message; the phone's answer is imported as history", async () => {
    const socket = sockets.latest();
    const asked = await fetchHistory(ADA, 50);
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    expect(asked.body).toEqual({ chatId: ADA, count: 50, before: { waMessageId: 'L1', timestamp: 1_700_000_000 } });
    expect((await fetchHistory(GROUP, 10)).status).toBe(202);
    expect(socket.historyRequests).toEqual([
      { count: 50, key: { remoteJid: ADA_JID, id: 'L1', fromMe: false }, timestampMs: 1_700_000_000_000 },
      {
        count: 10,
        key: { remoteJid: GROUP, id: 'G1', fromMe: false, participant: `${MEMBER}@s.whatsapp.net` },
        timestampMs: 1_700_000_100_000,
      },
    ]);
    socket.ev.emit('messaging-history.set', {
      chats: [],
      contacts: [],
      messages: [
        message({
          key: { remoteJid: ADA_JID, id: 'O1', fromMe: false },
          messageTimestamp: 1_699_990_000,
          message: { conversation: 'older still' },
        }),
        message({
          key: { remoteJid: ADA_JID, id: 'O2', fromMe: true },
          messageTimestamp: 1_699_990_060,
          message: { extendedTextMessage: { text: 'and my older answer' } },
        }),
      ],
      syncType: HistorySyncType.ON_DEMAND,
      peerDataRequestSessionId: 'pdo-1',
    });
    const items = await eventually(async () => {
      const now = await page(ADA);
      return now.length === 4 ? now : undefined;
    }, 'the older messages');
    expect(items.map((m) => [m.waMessageId, m.historical, m.fromMe])).toEqual([
      ['L2', true, true],
      ['L1', true, false],
      ['O2', true, true],
      ['O1', true, false],
    ]);
    const inbox = await world.gateway.store.readStream(inboxStream(deviceId));
    expect(inbox.map((e) => e.type)).not.toContain('MessageReceived');
    expect(inbox.filter((e) => e.type === 'HistorySynced').map((e) => (e.data as { final: boolean }).final)).toEqual([
      true,
      true,
    ]);
  });

  it('a chat the gateway does not hold: 404, nothing asked', async () => {
    const before = sockets.latest().historyRequests.length;
    const unknown = await fetchHistory('4915155555555', 20);
    expect([unknown.status, unknown.body.code]).toEqual([404, 'chat_not_found']);
    expect(sockets.latest().historyRequests).toHaveLength(before);
  });
});
