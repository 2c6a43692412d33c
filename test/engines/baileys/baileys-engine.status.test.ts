/**
 * The Baileys engine through a fake socket: a status goes to status@broadcast with its audience as Baileys'
 * statusJidList (and a text status's look); someone's status, a real protobuf, is reported as an inbound message of
 * `status@broadcast` from its poster (which the gateway records and sends as `status.received`); a viewer's receipt
 * names the viewer.
 */
import { type WAMessage, proto } from 'baileys';
import { describe, expect, it } from 'vitest';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();
const OTHER = '4915122222222';

const real = (message: proto.IWebMessageInfo): WAMessage =>
  proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(message).finish()) as WAMessage;

describe('Baileys engine (fake socket): statuses', () => {
  it('sends a status to status@broadcast with statusJidList, background colour and font', async () => {
    const { connection, socket } = await h.online();
    await connection.send({
      waMessageId: 'STATUS1',
      to: 'status@broadcast',
      content: { kind: 'text', text: 'Open on Sunday', backgroundColor: '#25D366', font: 2 },
      audience: [PEER, OTHER],
    });
    expect(socket.sent).toHaveLength(1);
    expect(socket.sent[0].jid).toBe('status@broadcast');
    expect(socket.sent[0].content).toMatchObject({ text: 'Open on Sunday' });
    expect(socket.sent[0].options).toMatchObject({
      messageId: 'STATUS1',
      statusJidList: [PEER_JID, `${OTHER}@s.whatsapp.net`],
      broadcast: true,
      backgroundColor: '#25D366',
      font: 2,
    });
  });

  it("reports someone's status (a real protobuf) as an inbound message of status@broadcast; its own are not", async () => {
    const { events, socket } = await h.online();
    socket.emit('messages.upsert', {
      type: 'notify',
      messages: [
        real({
          key: { remoteJid: 'status@broadcast', fromMe: false, id: 'S1', participant: PEER_JID },
          message: { extendedTextMessage: { text: 'my story', backgroundArgb: 0xff25d366, font: 1 } },
          messageTimestamp: 1_700_000_000,
          pushName: 'Peer',
        }),
        real({
          key: { remoteJid: 'status@broadcast', fromMe: true, id: 'S2' },
          message: { conversation: 'posted from the phone' },
          messageTimestamp: 1_700_000_001,
        }),
        real({
          key: { remoteJid: 'status@broadcast', fromMe: false, id: 'S3', participant: PEER_JID },
          message: { imageMessage: { mimetype: 'image/jpeg', caption: 'look', fileLength: 10 } },
          messageTimestamp: 1_700_000_002,
        }),
      ],
    });
    await eventually(() => events.inbounds.length === 2);
    expect(events.inbounds[0]).toMatchObject({
      waMessageId: 'S1',
      chatId: 'status@broadcast',
      from: PEER,
      fromMe: false,
      isGroup: false,
      type: 'text',
      body: 'my story',
    });
    expect(events.inbounds[0].participant).toBeUndefined();
    expect(events.inbounds[1]).toMatchObject({
      waMessageId: 'S3',
      chatId: 'status@broadcast',
      from: PEER,
      type: 'image',
      body: 'look',
      media: { mimetype: 'image/jpeg' },
    });
    expect(typeof events.inbounds[1].downloadMedia).toBe('function');
  });

  it("a viewer's read receipt of a status names the viewer", async () => {
    const { events, socket } = await h.online();
    socket.emit('message-receipt.update', [
      {
        key: { remoteJid: 'status@broadcast', fromMe: true, id: 'STATUS1' },
        receipt: { userJid: PEER_JID, readTimestamp: 1_700_000_100 },
      },
    ]);
    await eventually(() => events.receipts.length === 1);
    expect(events.receipts[0]).toMatchObject({ waMessageId: 'STATUS1', status: 'read', recipient: PEER });
  });
});
