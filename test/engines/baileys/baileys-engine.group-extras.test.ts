/**
 * The Baileys engine through a fake socket: the group settings of API Part 3 (disappearing messages, join
 * approval, who adds) mapped onto Baileys' calls, pictures and join requests; and the network's notifications of
 * them as reports. The notifications are real protobufs (WebMessageInfo stubs and an EPHEMERAL_SETTING protocol
 * message, encoded and decoded) run through Baileys' own processMessage, which emits the events the engine hears.
 */
import { type WAMessage, proto } from 'baileys';
import processMessage from 'baileys/lib/Utils/process-message.js';
import { describe, expect, it } from 'vitest';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import type { FakeSocket } from './support/fake-socket.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();
const OTHER = '4915122222222';
const OTHER_JID = `${OTHER}@s.whatsapp.net`;
const G = '120363000000000001@g.us';

const decoded = (message: proto.IWebMessageInfo): WAMessage =>
  proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(message).finish()) as WAMessage;

/** What WhatsApp sends and Baileys processes into events (on the fake socket's emitter). */
async function notify(socket: FakeSocket, message: proto.IWebMessageInfo): Promise<void> {
  await processMessage(decoded(message), {
    shouldProcessHistoryMsg: false,
    ev: socket.ev as never,
    creds: socket.creds,
    keyStore: {} as never,
    signalRepository: {} as never,
    logger: undefined,
    options: {},
    getMessage: async () => undefined,
  });
}

let stubId = 0;
const stub = (type: proto.WebMessageInfo.StubType, parameters: string[]): proto.IWebMessageInfo => ({
  key: { remoteJid: G, fromMe: false, id: `STUB${++stubId}`, participant: PEER_JID },
  messageTimestamp: 1_700_000_000,
  messageStubType: type,
  messageStubParameters: parameters,
});

describe('Baileys engine (fake socket): groups, continued', () => {
  it('maps ephemeral, join approval and who adds onto their Baileys calls, and reads them from metadata', async () => {
    const { connection, socket } = await h.online();
    const { group } = await connection.groups!.create('S', [PEER]);
    socket.groupCalls.length = 0;
    await connection.groups!.update(group.groupId, { ephemeral: 86_400, joinApproval: true, membersCanAdd: false });
    expect(socket.groupCalls).toEqual([
      { method: 'groupToggleEphemeral', args: [group.groupId, 86_400] },
      { method: 'groupJoinApprovalMode', args: [group.groupId, 'on'] },
      { method: 'groupMemberAddMode', args: [group.groupId, 'admin_add'] },
    ]);
    Object.assign(socket.groups.get(group.groupId)!, {
      ephemeralDuration: 604_800,
      joinApprovalMode: true,
      memberAddMode: true,
    });
    expect(await connection.groups!.metadata(group.groupId)).toMatchObject({
      ephemeral: 604_800,
      joinApproval: true,
      membersCanAdd: true,
    });
  });

  it('sets, removes and reads the picture (none: null)', async () => {
    const { connection, socket } = await h.online();
    const { group } = await connection.groups!.create('P', [PEER]);
    socket.groupCalls.length = 0;
    await connection.groups!.setPicture!(group.groupId, Buffer.from([1, 2, 3]));
    await connection.groups!.removePicture!(group.groupId);
    expect(socket.groupCalls).toEqual([
      { method: 'updateProfilePicture', args: [group.groupId, 3] },
      { method: 'removeProfilePicture', args: [group.groupId] },
    ]);
    expect(await connection.groups!.pictureUrl!(group.groupId)).toBeNull();
  });

  it('lists join requests and answers them, one status per number', async () => {
    const { connection, socket } = await h.online();
    const { group } = await connection.groups!.create('R', [PEER]);
    socket.joinRequests.set(group.groupId, [
      { jid: OTHER_JID, request_time: '1700000000' },
      { jid: '999@lid', phone_number: '4915133333333@s.whatsapp.net', request_time: '1700000100' },
    ]);
    expect(await connection.groups!.joinRequests!(group.groupId)).toEqual([
      { number: OTHER, requestedAt: '2023-11-14T22:13:20.000Z' },
      { number: '4915133333333', requestedAt: '2023-11-14T22:15:00.000Z' },
    ]);
    expect(await connection.groups!.answerJoinRequests!(group.groupId, 'approve', [OTHER, '4915144444444'])).toEqual([
      { number: OTHER, status: 'ok' },
      { number: '4915144444444', status: 'not_found' },
    ]);
    expect(socket.groupCalls.at(-1)).toEqual({
      method: 'groupRequestParticipantsUpdate',
      args: [group.groupId, [OTHER_JID, '4915144444444@s.whatsapp.net'], 'approve'],
    });
  });

  it('matches answers to join requests by number (a LID mapped), never by their place in the list', async () => {
    const { connection, socket } = await h.online();
    const { group } = await connection.groups!.create('R', [PEER]);
    socket.joinRequests.set(group.groupId, [{ jid: OTHER_JID, request_time: '1700000000' }]);
    // WhatsApp answers with LIDs, in another order: one the account can map, one it cannot.
    socket.answeredAs.set(OTHER_JID, '555@lid');
    socket.lidToPhone.set('555@lid', OTHER_JID);
    socket.answeredAs.set('4915144444444@s.whatsapp.net', '666@lid');
    socket.answersReversed = true;
    expect(await connection.groups!.answerJoinRequests!(group.groupId, 'approve', [OTHER, '4915144444444'])).toEqual([
      { number: OTHER, status: 'ok' },
      { number: '4915144444444', status: 'not_allowed' },
    ]);
  });

  it('reports settings notifications and join requests that arrive as real protobuf stubs', async () => {
    const { events, socket } = await h.online();
    const { JOIN_APPROVAL_MODE, MEMBER_ADD_MODE, REQUEST } = {
      JOIN_APPROVAL_MODE: proto.WebMessageInfo.StubType.GROUP_MEMBERSHIP_JOIN_APPROVAL_MODE,
      MEMBER_ADD_MODE: proto.WebMessageInfo.StubType.GROUP_MEMBER_ADD_MODE,
      REQUEST: proto.WebMessageInfo.StubType.GROUP_MEMBERSHIP_JOIN_APPROVAL_REQUEST_NON_ADMIN_ADD,
    };
    await notify(socket, stub(JOIN_APPROVAL_MODE, ['on']));
    await notify(socket, stub(MEMBER_ADD_MODE, ['all_member_add']));
    await notify(socket, stub(REQUEST, [JSON.stringify({ lid: '777@lid', pn: OTHER_JID }), 'created', 'invite_link']));
    await notify(socket, stub(REQUEST, [JSON.stringify({ lid: '777@lid', pn: OTHER_JID }), 'revoked', 'invite_link']));
    // The disappearing-message timer: a protocol message in the group, folded into the chat by Baileys.
    await notify(socket, {
      key: { remoteJid: G, fromMe: false, id: 'EPH1', participant: PEER_JID },
      messageTimestamp: 1_700_000_000,
      message: {
        protocolMessage: { type: proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING, ephemeralExpiration: 86_400 },
      },
    });
    await eventually(() => events.groupReports.length === 5);
    expect(events.groupReports).toEqual([
      { kind: 'updated', groupId: G, change: { joinApproval: true }, by: PEER },
      { kind: 'updated', groupId: G, change: { membersCanAdd: true }, by: PEER },
      { kind: 'join_request', groupId: G, number: OTHER, action: 'created' },
      { kind: 'join_request', groupId: G, number: OTHER, action: 'revoked' },
      { kind: 'updated', groupId: G, change: { ephemeral: 86_400 } },
    ]);
  });
});
