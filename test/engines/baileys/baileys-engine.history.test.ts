/**
 * The Baileys engine through a fake socket: history sync. What `messaging-history.set` brings (real WebMessageInfo
 * protobufs) reported as history chunks, never as inbound messages, and which chunks the device's `historySync`
 * setting lets Baileys download (on-demand answers always); a chat's older messages asked for on demand.
 */
import { type WAMessage, proto } from 'baileys';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS } from '../../../src/settings/settings-events.js';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { recordingEvents } from './support/recording-events.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();
const GROUP = '120363000000000077@g.us';
const MEMBER = '4915198765432';
const { HistorySyncType } = proto.HistorySync;

const message = (value: Record<string, unknown>) => proto.WebMessageInfo.fromObject(value) as WAMessage;

/** A chunk as Baileys emits it after downloading and decoding a history sync notification. */
const chunk = (extra: Record<string, unknown> = {}) => ({
  chats: [{ id: PEER_JID, name: 'Ada' }, { id: GROUP, name: 'Team' }, { id: 'status@broadcast' }],
  contacts: [],
  messages: [
    message({
      key: { remoteJid: PEER_JID, id: 'H1', fromMe: false },
      messageTimestamp: 1_700_000_000,
      pushName: 'Ada',
      message: { conversation: 'hello from before' },
    }),
    message({
      key: { remoteJid: PEER_JID, id: 'H2', fromMe: true },
      messageTimestamp: 1_700_000_060,
      message: { extendedTextMessage: { text: 'my answer' } },
    }),
    message({
      key: { remoteJid: GROUP, id: 'H3', fromMe: false, participant: `${MEMBER}@s.whatsapp.net` },
      messageTimestamp: 1_700_000_120,
      message: { imageMessage: { mimetype: 'image/jpeg', caption: 'the plan', fileLength: 1234 } },
    }),
    // Not history of a chat: a revoke (protocol traffic) and someone's status.
    message({
      key: { remoteJid: PEER_JID, id: 'H4', fromMe: false },
      messageTimestamp: 1_700_000_180,
      message: { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE, key: { id: 'H1' } } },
    }),
    message({
      key: { remoteJid: 'status@broadcast', id: 'H5', fromMe: false, participant: PEER_JID },
      messageTimestamp: 1_700_000_240,
      message: { conversation: 'a status' },
    }),
  ],
  syncType: HistorySyncType.INITIAL_BOOTSTRAP,
  chunkOrder: 1,
  progress: 40,
  ...extra,
});

describe('Baileys engine (fake socket): history sync', () => {
  it("reports a chunk's messages and chats as history, not as inbound messages, with an id the same chunk keeps", async () => {
    const { events, socket } = await h.online();
    socket.ev.emit('messaging-history.set', chunk());
    await eventually(() => events.histories.length === 1, 'the chunk reported');
    const [first] = events.histories;
    expect(first.chats).toEqual([
      { chatId: PEER, name: 'Ada' },
      { chatId: GROUP, name: 'Team' },
    ]);
    expect(first.messages.map((m) => [m.waMessageId, m.chatId, m.from, m.fromMe, m.type])).toEqual([
      ['H1', PEER, PEER, false, 'text'],
      ['H2', PEER, '4915100000001', true, 'text'],
      ['H3', GROUP, MEMBER, false, 'image'],
    ]);
    expect(first.messages[0]).toMatchObject({ body: 'hello from before', timestamp: 1_700_000_000, isGroup: false });
    expect(first.messages[2]).toMatchObject({
      participant: MEMBER,
      isGroup: true,
      media: { mimetype: 'image/jpeg', size: 1234 },
    });
    expect(first).toMatchObject({ progress: 40, final: false });
    expect(events.inbounds).toEqual([]);

    // Sent again (a reconnect during the sync): the same id, so the gateway records nothing twice.
    socket.ev.emit('messaging-history.set', chunk());
    // The last chunk of the sync.
    socket.ev.emit('messaging-history.set', chunk({ chunkOrder: 2, isLatest: true, progress: 100 }));
    await eventually(() => events.histories.length === 3, 'the other chunks reported');
    expect(events.histories[1].syncId).toBe(first.syncId);
    expect(events.histories[2].syncId).not.toBe(first.syncId);
    expect(events.histories[2].final).toBe(true);
  });

  it('leaves out chunks without history (push names) and takes history only as the historySync setting says', async () => {
    const { events, socket } = await h.online();
    socket.ev.emit('messaging-history.set', chunk({ syncType: HistorySyncType.PUSH_NAME }));
    socket.ev.emit('messaging-history.set', chunk({ syncType: HistorySyncType.RECENT }));
    await eventually(() => events.histories.length === 1, 'the recent chunk');
    expect(events.log.filter((entry) => entry === 'history')).toHaveLength(1);

    const notification = (syncType: proto.Message.HistorySyncType) => ({ syncType });
    const settingsOf = (historySync: 'none' | 'recent' | 'full') =>
      h.makeEngine({ deviceSettings: () => ({ ...DEFAULT_SETTINGS, historySync }) });
    const configs: Record<string, { full: boolean; recent: boolean; fullSync: boolean; onDemand: boolean }> = {};
    for (const mode of ['none', 'recent', 'full'] as const) {
      await h.linkedCreds(`dev-${mode}`);
      await settingsOf(mode).connect(`dev-${mode}`, recordingEvents());
      const config = h.sockets.latest().config;
      configs[mode] = {
        full: config.shouldSyncHistoryMessage!(notification(proto.Message.HistorySyncType.FULL)),
        recent: config.shouldSyncHistoryMessage!(notification(proto.Message.HistorySyncType.RECENT)),
        fullSync: config.syncFullHistory!,
        onDemand: config.shouldSyncHistoryMessage!(notification(proto.Message.HistorySyncType.ON_DEMAND)),
      };
    }
    expect(configs).toEqual({
      none: { full: false, recent: false, fullSync: false, onDemand: true },
      recent: { full: false, recent: true, fullSync: false, onDemand: true },
      full: { full: true, recent: true, fullSync: true, onDemand: true },
    });
  });

  it("asks for a chat's older messages with fetchMessageHistory (the oldest message's key, its time in ms); the answer is one final chunk", async () => {
    const { connection, events, socket } = await h.online();
    await connection.chats!.fetchHistory!(GROUP, 50, {
      waMessageId: 'H3',
      fromMe: false,
      participant: MEMBER,
      timestamp: 1_700_000_120,
    });
    await connection.chats!.fetchHistory!(PEER, 20, { waMessageId: 'H2', fromMe: true, timestamp: 1_700_000_060 });
    expect(socket.historyRequests).toEqual([
      {
        count: 50,
        key: { remoteJid: GROUP, id: 'H3', fromMe: false, participant: `${MEMBER}@s.whatsapp.net` },
        timestampMs: 1_700_000_120_000,
      },
      { count: 20, key: { remoteJid: PEER_JID, id: 'H2', fromMe: true }, timestampMs: 1_700_000_060_000 },
    ]);
    // What the phone answers: an on-demand chunk, without isLatest or progress (as Baileys emits it).
    socket.ev.emit('messaging-history.set', {
      chats: [],
      contacts: [],
      messages: [
        message({
          key: { remoteJid: PEER_JID, id: 'H0', fromMe: false },
          messageTimestamp: 1_699_999_000,
          message: { conversation: 'older still' },
        }),
      ],
      syncType: HistorySyncType.ON_DEMAND,
      peerDataRequestSessionId: 'pdo-2',
    });
    await eventually(() => events.histories.length === 1, 'the answer reported');
    expect(events.histories[0]).toMatchObject({ final: true, messages: [{ waMessageId: 'H0', chatId: PEER }] });
    expect(events.inbounds).toEqual([]);
  });
});
