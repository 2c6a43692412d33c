/**
 * The Baileys engine through a fake socket (support/fake-socket-engine.ts): groups mapped onto Baileys'
 * group calls, its refusals into the port's errors, and its group events into reports.
 */
import { describe, expect, it } from 'vitest';
import { boom } from './support/fake-socket.js';
import { PEER, PEER_JID, useFakeSocketEngine } from './support/fake-socket-engine.js';
import { eventually } from '../../support/eventually.js';

const h = useFakeSocketEngine();
const ME = '4915100000001';
const OTHER = '4915122222222';
const OTHER_JID = `${OTHER}@s.whatsapp.net`;

describe('Baileys engine (fake socket): groups', () => {
  it('creates a group with groupCreate; numbers not added are failed', async () => {
    const { connection, socket } = await h.online();
    socket.participantStatus.set(OTHER_JID, '403');
    const created = await connection.groups!.create('Team', [PEER, OTHER]);
    expect(socket.groupCalls[0]).toEqual({ method: 'groupCreate', args: ['Team', [PEER_JID, OTHER_JID]] });
    expect(created.group).toMatchObject({ subject: 'Team', announce: false, locked: false });
    expect(created.group.participants).toEqual([
      { number: ME, role: 'superadmin' },
      { number: PEER, role: 'member' },
    ]);
    expect(created.failed).toEqual([{ number: OTHER, reason: 'not_added' }]);
  });

  it('lists with groupFetchAllParticipating and reads metadata, LID participants by their phone number', async () => {
    const { connection, socket } = await h.online();
    socket.groups.set('120363000000000009@g.us', {
      id: '120363000000000009@g.us',
      subject: 'LIDs',
      desc: 'about',
      announce: true,
      restrict: true,
      owner: undefined,
      participants: [
        { id: '111@lid', phoneNumber: `${ME}@s.whatsapp.net`, admin: 'admin' },
        { id: '222@lid', admin: null },
      ],
    });
    expect(await connection.groups!.list()).toEqual([
      {
        groupId: '120363000000000009@g.us',
        subject: 'LIDs',
        description: 'about',
        announce: true,
        locked: true,
        ephemeral: 0,
        joinApproval: false,
        membersCanAdd: false,
        participants: [
          { number: ME, role: 'admin' },
          { number: '222@lid', role: 'member' },
        ],
      },
    ]);
    expect((await connection.groups!.metadata('120363000000000009@g.us')).subject).toBe('LIDs');
  });

  it('maps settings onto subject, description and setting updates', async () => {
    const { connection, socket } = await h.online();
    const { group } = await connection.groups!.create('S', [PEER]);
    socket.groupCalls.length = 0;
    await connection.groups!.update(group.groupId, { subject: 'New', description: '', announce: true, locked: false });
    expect(socket.groupCalls).toEqual([
      { method: 'groupUpdateSubject', args: [group.groupId, 'New'] },
      { method: 'groupUpdateDescription', args: [group.groupId, undefined] },
      { method: 'groupSettingUpdate', args: [group.groupId, 'announcement'] },
      { method: 'groupSettingUpdate', args: [group.groupId, 'unlocked'] },
    ]);
  });

  it('answers a status per participant', async () => {
    const { connection, socket } = await h.online();
    const { group } = await connection.groups!.create('P', [PEER]);
    socket.participantStatus.set(OTHER_JID, '409');
    socket.participantStatus.set('4915133333333@s.whatsapp.net', '404');
    socket.participantStatus.set('4915144444444@s.whatsapp.net', '403');
    expect(
      await connection.groups!.participants(group.groupId, 'add', [PEER, OTHER, '4915133333333', '4915144444444']),
    ).toEqual([
      { number: PEER, status: 'ok' },
      { number: OTHER, status: 'already_in_group' },
      { number: '4915133333333', status: 'not_found' },
      { number: '4915144444444', status: 'not_allowed' },
    ]);
    expect(await connection.groups!.participants(group.groupId, 'remove', ['4915133333333'])).toEqual([
      { number: '4915133333333', status: 'not_in_group' },
    ]);
  });

  it('invite codes, joining by link, leaving', async () => {
    const { connection, socket } = await h.online();
    const { group } = await connection.groups!.create('I', [PEER]);
    expect(await connection.groups!.inviteCode(group.groupId)).toBe('AbCdEfGhIjKlMnOpQrStUv');
    expect(await connection.groups!.revokeInvite(group.groupId)).toBe('NewCodeNewCodeNewCode1');
    expect(await connection.groups!.join('https://chat.whatsapp.com/NewCodeNewCodeNewCode1')).toBe(group.groupId);
    expect(socket.groupCalls.find((c) => c.method === 'groupAcceptInvite')?.args).toEqual(['NewCodeNewCodeNewCode1']);
    await expect(connection.groups!.join('Unknown000000000000000')).rejects.toMatchObject({
      code: 'invalid_invite_code',
      permanent: true,
    });
    await connection.groups!.leave(group.groupId);
    expect(socket.groups.has(group.groupId)).toBe(false);
  });

  it("turns the server's refusals into the port's errors", async () => {
    const { connection, socket } = await h.online();
    await expect(connection.groups!.metadata('120363999999999999@g.us')).rejects.toMatchObject({
      code: 'group_not_found',
    });
    const { group } = await connection.groups!.create('R', [PEER]);
    socket.groupFailure = boom(400, 'forbidden', 403);
    await expect(connection.groups!.update(group.groupId, { subject: 'x' })).rejects.toMatchObject({
      code: 'not_group_admin',
      permanent: true,
    });
    socket.groupFailure = boom(500, 'internal-server-error', 500);
    await expect(connection.groups!.inviteCode(group.groupId)).rejects.toMatchObject({
      code: 'engine_error',
      permanent: false,
    });
  });

  it('refuses group calls while not online', async () => {
    const { connection } = await h.online();
    await connection.close();
    await expect(connection.groups!.list()).rejects.toMatchObject({ code: 'not_connected' });
  });

  it('reports groups.upsert, groups.update and group-participants.update', async () => {
    const { events, socket } = await h.online();
    const G = '120363000000000001@g.us';
    socket.emit('groups.upsert', [
      {
        id: G,
        subject: 'Added',
        owner: undefined,
        participants: [
          { id: PEER_JID, admin: 'superadmin' },
          { id: `${ME}@s.whatsapp.net`, admin: null },
        ],
      },
    ]);
    socket.emit('groups.update', [{ id: G, subject: 'Renamed', restrict: true, author: PEER_JID }, { id: G }]);
    socket.emit('group-participants.update', {
      id: G,
      author: PEER_JID,
      action: 'promote',
      participants: [{ id: '333@lid', phoneNumber: `${OTHER}@s.whatsapp.net` }],
    });
    socket.emit('group-participants.update', {
      id: G,
      author: PEER_JID,
      action: 'modify',
      participants: [{ id: OTHER_JID }],
    });
    await eventually(() => events.groupReports.length === 3);
    expect(events.groupReports).toEqual([
      {
        kind: 'metadata',
        group: {
          groupId: G,
          subject: 'Added',
          announce: false,
          locked: false,
          ephemeral: 0,
          joinApproval: false,
          membersCanAdd: false,
          participants: [
            { number: PEER, role: 'superadmin' },
            { number: ME, role: 'member' },
          ],
        },
      },
      { kind: 'updated', groupId: G, change: { subject: 'Renamed', locked: true }, by: PEER },
      { kind: 'participants', groupId: G, action: 'promote', participants: [OTHER], by: PEER },
    ]);
  });
});
