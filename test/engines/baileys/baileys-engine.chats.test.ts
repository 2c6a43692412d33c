/**
 * The Baileys engine through a fake socket: chat management mapped onto `chatModify` and message pins, and the
 * app-state changes made on the phone (real SyncActionValue protobufs run through Baileys' own processSyncAction,
 * which emits on the socket) mapped into chat activities.
 */
import { type BaileysEventEmitter, type ChatMutation, processSyncAction, proto } from 'baileys';
import { describe, expect, it } from 'vitest';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();
const GROUP = '120363000000000077@g.us';
const LAST = { waMessageId: 'LAST1', fromMe: false, timestamp: 1_700_000_000 };

/** The phone made a change: Baileys decodes the app-state patch into this and processes it. */
function phoneDid(socket: { ev: unknown }, index: string[], value: proto.ISyncActionValue): void {
  const mutation: ChatMutation = {
    syncAction: proto.SyncActionData.fromObject({ value: { timestamp: Date.now(), ...value } }),
    index,
  };
  processSyncAction(mutation, socket.ev as BaileysEventEmitter, { id: '4915100000001@s.whatsapp.net' });
}

describe('Baileys engine (fake socket): managing chats', () => {
  it('archive, pin, mute, read state, delete and clear go through chatModify with the last message', async () => {
    const { connection, socket } = await h.online();
    const chats = connection.chats!;
    await chats.modify(PEER, { archived: true }, LAST);
    await chats.modify(PEER, { pinned: true }, LAST);
    await chats.modify(PEER, { mutedUntilMs: 1_800_000_000_000 }, LAST);
    await chats.modify(PEER, { mutedUntilMs: Number.POSITIVE_INFINITY }, LAST);
    await chats.modify(PEER, { mutedUntilMs: null }, LAST);
    await chats.modify(PEER, { unread: true }, LAST);
    await chats.modify(GROUP, { deleted: true }, { ...LAST, participant: PEER });
    await chats.modify(PEER, { cleared: true }, undefined);
    const lastMessages = [
      { key: { remoteJid: PEER_JID, id: 'LAST1', fromMe: false }, messageTimestamp: LAST.timestamp },
    ];
    expect(socket.chatMods).toEqual([
      { jid: PEER_JID, mod: { archive: true, lastMessages } },
      { jid: PEER_JID, mod: { pin: true } },
      { jid: PEER_JID, mod: { mute: 1_800_000_000_000 } },
      { jid: PEER_JID, mod: { mute: -1 } },
      { jid: PEER_JID, mod: { mute: null } },
      { jid: PEER_JID, mod: { markRead: false, lastMessages } },
      {
        jid: GROUP,
        mod: {
          delete: true,
          lastMessages: [
            {
              key: { remoteJid: GROUP, id: 'LAST1', fromMe: false, participant: PEER_JID },
              messageTimestamp: LAST.timestamp,
            },
          ],
        },
      },
      { jid: PEER_JID, mod: { clear: true, lastMessages: [] } },
    ]);
  });

  it('stars and deletes for me through chatModify, pins with a pin message; a refusal is an engine error', async () => {
    const { connection, socket } = await h.online();
    const chats = connection.chats!;
    await chats.star(PEER, { waMessageId: 'M1', fromMe: true, timestamp: 5 }, true);
    await chats.deleteForMe(PEER, { waMessageId: 'M2', fromMe: false, timestamp: 6 });
    await chats.pin(PEER, { waMessageId: 'M3', fromMe: false, timestamp: 7 }, 604_800);
    await chats.pin(PEER, { waMessageId: 'M3', fromMe: false, timestamp: 7 }, 0);
    expect(socket.chatMods).toEqual([
      { jid: PEER_JID, mod: { star: { messages: [{ id: 'M1', fromMe: true }], star: true } } },
      {
        jid: PEER_JID,
        mod: {
          deleteForMe: { deleteMedia: true, key: { remoteJid: PEER_JID, id: 'M2', fromMe: false }, timestamp: 6 },
        },
      },
    ]);
    expect(socket.sent.map((s) => s.content)).toEqual([
      { pin: { remoteJid: PEER_JID, id: 'M3', fromMe: false }, type: proto.PinInChat.Type.PIN_FOR_ALL, time: 604_800 },
      { pin: { remoteJid: PEER_JID, id: 'M3', fromMe: false }, type: proto.PinInChat.Type.UNPIN_FOR_ALL },
    ]);
    socket.chatModifyFailure = new Error('app state conflict');
    await expect(chats.modify(PEER, { pinned: true }, LAST)).rejects.toMatchObject({ code: 'engine_error' });
  });

  it("maps the phone's app-state changes (real protobufs through Baileys) into chat activities", async () => {
    const { socket, events } = await h.online();
    phoneDid(socket, ['archive', PEER_JID], { archiveChatAction: { archived: true } });
    phoneDid(socket, ['pin_v1', PEER_JID], { pinAction: { pinned: true } });
    phoneDid(socket, ['mute', PEER_JID], { muteAction: { muted: true, muteEndTimestamp: 1_800_000_000_000 } });
    phoneDid(socket, ['mute', GROUP], { muteAction: { muted: true, muteEndTimestamp: -1 } });
    phoneDid(socket, ['mute', PEER_JID], { muteAction: { muted: false } });
    phoneDid(socket, ['markChatAsRead', PEER_JID], { markChatAsReadAction: { read: false } });
    phoneDid(socket, ['star', PEER_JID, 'S1', '0', '0'], { starAction: { starred: true } });
    phoneDid(socket, ['deleteMessageForMe', PEER_JID, 'D1', '1', '0'], {
      deleteMessageForMeAction: { deleteMedia: false },
    });
    phoneDid(socket, ['deleteChat', PEER_JID, '1'], { deleteChatAction: {} });
    // A LID chat is shown by its number when the mapping knows it.
    socket.lidToPhone.set('777@lid', '4915177777777@s.whatsapp.net');
    phoneDid(socket, ['archive', '777@lid'], { archiveChatAction: { archived: false } });
    // Status broadcasts are not chats the gateway shows.
    phoneDid(socket, ['archive', 'status@broadcast'], { archiveChatAction: { archived: true } });

    await eventually(() => (events.activities.length >= 10 ? true : undefined), 'ten chat activities');
    expect(events.activities).toEqual([
      { kind: 'chat_updated', chatId: PEER, archived: true },
      { kind: 'chat_updated', chatId: PEER, pinned: true },
      { kind: 'chat_updated', chatId: PEER, mutedUntil: new Date(1_800_000_000_000).toISOString() },
      { kind: 'chat_updated', chatId: GROUP, mutedUntil: 'forever' },
      { kind: 'chat_updated', chatId: PEER, mutedUntil: null },
      { kind: 'chat_updated', chatId: PEER, unread: true },
      { kind: 'message_starred', chatId: PEER, waMessageId: 'S1', starred: true },
      { kind: 'message_deleted', chatId: PEER, waMessageId: 'D1' },
      { kind: 'chat_deleted', chatId: PEER, cleared: false },
      { kind: 'chat_updated', chatId: '4915177777777', archived: false },
    ]);
  });

  it("passes over Baileys' local echo of a change made here (emitOwnEvents), not the phone's later same change", async () => {
    const { connection, socket, events } = await h.online();
    // The sync actions Baileys applies locally for these modifications, emitted while chatModify runs.
    socket.chatModifyEcho = (mod, jid) => {
      if ('archive' in mod) phoneDid(socket, ['archive', jid], { archiveChatAction: { archived: mod.archive } });
      if ('delete' in mod) phoneDid(socket, ['deleteChat', jid, '1'], { deleteChatAction: {} });
      if ('star' in mod)
        phoneDid(socket, ['star', jid, mod.star.messages[0].id, '1', '0'], { starAction: { starred: mod.star.star } });
      if ('deleteForMe' in mod)
        phoneDid(socket, ['deleteMessageForMe', jid, mod.deleteForMe.key.id!, '0', '0'], {
          deleteMessageForMeAction: { deleteMedia: true },
        });
    };
    const chats = connection.chats!;
    await chats.modify(PEER, { archived: true }, LAST);
    await chats.star(PEER, { waMessageId: 'S2', fromMe: true, timestamp: 5 }, true);
    await chats.deleteForMe(PEER, { waMessageId: 'D2', fromMe: false, timestamp: 6 });
    await chats.modify(PEER, { deleted: true }, LAST);
    // Later the phone archives the chat again itself: that one is reported.
    socket.chatModifyEcho = undefined;
    phoneDid(socket, ['archive', PEER_JID], { archiveChatAction: { archived: true } });

    await eventually(() => (events.activities.length >= 1 ? true : undefined), "the phone's change");
    expect(events.activities).toEqual([{ kind: 'chat_updated', chatId: PEER, archived: true }]);
  });

  it("maps the phone's label edits and chat labels (real protobufs through Baileys) into label activities", async () => {
    const { socket, events } = await h.online();
    phoneDid(socket, ['label_edit', '5'], { labelEditAction: { name: 'Paid', color: 3 } });
    phoneDid(socket, ['label_jid', '5', PEER_JID], { labelAssociationAction: { labeled: true } });
    phoneDid(socket, ['label_jid', '5', PEER_JID], { labelAssociationAction: { labeled: false } });
    // Labels on single messages are not shown.
    phoneDid(socket, ['label_message', '5', PEER_JID, 'M1', '0', '0'], { labelAssociationAction: { labeled: true } });
    phoneDid(socket, ['label_edit', '5'], { labelEditAction: { name: 'Paid', color: 3, deleted: true } });

    await eventually(() => (events.activities.length >= 4 ? true : undefined), 'four label activities');
    expect(events.activities).toEqual([
      { kind: 'label_updated', labelId: '5', name: 'Paid', color: 3, deleted: false },
      { kind: 'chat_labels', chatId: PEER, labelId: '5', action: 'add' },
      { kind: 'chat_labels', chatId: PEER, labelId: '5', action: 'remove' },
      { kind: 'label_updated', labelId: '5', name: 'Paid', color: 3, deleted: true },
    ]);
  });

  it('makes labels and labels chats through chatModify; only a WhatsApp Business phone has labels', async () => {
    const { connection, socket } = await h.online();
    const labels = connection.labels!;
    expect(labels.isBusiness()).toBe(false);
    // The platform the pairing named: smba / smbi are the WhatsApp Business apps.
    socket.creds.platform = 'smba';
    expect(labels.isBusiness()).toBe(true);
    await labels.edit({ labelId: '6', name: 'Paid', color: 3, deleted: false });
    await labels.labelChat(PEER, '6', 'add');
    await labels.labelChat(GROUP, '6', 'remove');
    await labels.edit({ labelId: '6', name: 'Paid', color: 3, deleted: true });
    expect(socket.chatMods).toEqual([
      { jid: '', mod: { addLabel: { id: '6', name: 'Paid', color: 3, deleted: false } } },
      { jid: PEER_JID, mod: { addChatLabel: { labelId: '6' } } },
      { jid: GROUP, mod: { removeChatLabel: { labelId: '6' } } },
      { jid: '', mod: { addLabel: { id: '6', name: 'Paid', color: 3, deleted: true } } },
    ]);
    socket.chatModifyFailure = new Error('app state conflict');
    await expect(labels.labelChat(PEER, '6', 'add')).rejects.toMatchObject({ code: 'engine_error' });
  });

  it("passes over Baileys' local echo of a label change made here, not the phone's later one", async () => {
    const { connection, socket, events } = await h.online();
    // What Baileys applies locally for these modifications (its app-state patches), emitted while chatModify runs.
    socket.chatModifyEcho = (mod, jid) => {
      if ('addLabel' in mod)
        phoneDid(socket, ['label_edit', mod.addLabel.id], {
          labelEditAction: { name: mod.addLabel.name, color: mod.addLabel.color, deleted: mod.addLabel.deleted },
        });
      if ('addChatLabel' in mod)
        phoneDid(socket, ['label_jid', mod.addChatLabel.labelId, jid], { labelAssociationAction: { labeled: true } });
    };
    await connection.labels!.edit({ labelId: '7', name: 'Lead', color: 1, deleted: false });
    await connection.labels!.labelChat(PEER, '7', 'add');
    // Later the phone does the same itself: that is reported.
    socket.chatModifyEcho = undefined;
    phoneDid(socket, ['label_edit', '7'], { labelEditAction: { name: 'Lead', color: 1 } });
    phoneDid(socket, ['label_jid', '7', PEER_JID], { labelAssociationAction: { labeled: true } });

    await eventually(() => (events.activities.length >= 2 ? true : undefined), "the phone's two changes");
    expect(events.activities).toEqual([
      { kind: 'label_updated', labelId: '7', name: 'Lead', color: 1, deleted: false },
      { kind: 'chat_labels', chatId: PEER, labelId: '7', action: 'add' },
    ]);
  });
});
