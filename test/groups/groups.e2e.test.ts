/**
 * Groups over HTTP with sandbox devices: create, read, change, participants, invites, join and leave,
 * the events of changes made elsewhere, and the refusals (shape, not in the group, not an admin, offline).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useSandboxWorld } from '../support/sandbox-world.js';
import { startTestGateway } from '../support/gateway.js';
import { type TestDevice, bringOnline, createSandboxDevice, waitForState } from '../support/sessions.js';
import { eventually } from '../support/eventually.js';
import { groupsStream } from '../../src/groups/group-events.js';

const ALICE = '4915100000001';
const BOB = '4915100000002';
const CAROL = '4915100000003';
const NOBODY = '4915100000000';

describe('groups of sandbox devices', () => {
  const world = useSandboxWorld({
    env: { SANDBOX_DELIVERED_DELAY_MS: '10000' },
    online: { alice: ALICE, bob: BOB, carol: CAROL },
    hookEvents: ['group.participants', 'group.updated', 'message.received'],
  });
  const { call, hooksOf } = world;
  const { alice, bob, carol } = world.devices;
  let offline: TestDevice;
  beforeAll(async () => {
    offline = await createSandboxDevice(world.api, 'offline');
  });

  it('creates a group, lists it, reads it with roles, and records it before answering', async () => {
    const created = await call(alice, 'POST', '/groups', { subject: 'Team', participants: [BOB, NOBODY] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      subject: 'Team',
      size: 2,
      isAdmin: true,
      announce: false,
      locked: false,
      failed: [{ number: NOBODY, reason: 'not_found' }],
    });
    const groupId = created.body.groupId as string;
    expect(groupId).toMatch(/^120363\d{12}@g\.us$/);
    expect(created.body.participants).toEqual([
      { number: ALICE, role: 'superadmin' },
      { number: BOB, role: 'member' },
    ]);

    const events = await world.gateway.store.readStream(groupsStream(alice.id));
    expect(events.map((e) => e.type)).toEqual(['GroupMetadataRecorded']);

    const list = await call(alice, 'GET', '/groups');
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([
      {
        groupId,
        subject: 'Team',
        size: 2,
        isAdmin: true,
        announce: false,
        locked: false,
        ephemeral: 0,
        joinApproval: false,
        membersCanAdd: false,
      },
    ]);

    // Bob was added: his device learns of the group from the network.
    await eventually(async () => (await call(bob, 'GET', '/groups')).body.items?.length === 1, 'bob to see the group');
    const bobsView = await call(bob, 'GET', `/groups/${groupId}`);
    expect(bobsView.body).toMatchObject({ groupId, isAdmin: false, size: 2 });
  });

  it('changes settings (admins only), and the other members get group.updated', async () => {
    const { body } = await call(alice, 'POST', '/groups', { subject: 'Settings', participants: [BOB] });
    const groupId = body.groupId as string;
    await eventually(async () => (await call(bob, 'GET', `/groups/${groupId}`)).status === 200, 'bob in the group');

    const patched = await call(alice, 'PATCH', `/groups/${groupId}`, {
      subject: 'Renamed',
      description: 'About us',
      announce: true,
      locked: true,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ subject: 'Renamed', description: 'About us', announce: true, locked: true });
    expect((await call(alice, 'GET', `/groups/${groupId}`)).body).toMatchObject({ subject: 'Renamed', announce: true });

    await world.receiver.waitUntil(() => hooksOf(bob, 'group.updated').some((d) => d.groupId === groupId));
    expect(hooksOf(bob, 'group.updated').find((d) => d.groupId === groupId)).toEqual({
      deviceId: bob.id,
      groupId,
      subject: 'Renamed',
      description: 'About us',
      announce: true,
      locked: true,
      by: ALICE,
    });
    await eventually(
      async () => (await call(bob, 'GET', `/groups/${groupId}`)).body.subject === 'Renamed',
      "bob's read model updated",
    );

    const refused = await call(bob, 'PATCH', `/groups/${groupId}`, { subject: 'Mine now' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('not_group_admin');
    expect((await call(bob, 'GET', `/groups/${groupId}`)).body.subject).toBe('Renamed');
  });

  it('adds, promotes, demotes and removes with a result per number; members hear of it', async () => {
    const { body } = await call(alice, 'POST', '/groups', { subject: 'People', participants: [BOB] });
    const groupId = body.groupId as string;

    const added = await call(alice, 'POST', `/groups/${groupId}/participants`, {
      action: 'add',
      participants: [CAROL, BOB, NOBODY],
    });
    expect(added.status).toBe(200);
    expect(added.body.results).toEqual([
      { number: CAROL, status: 'ok' },
      { number: BOB, status: 'already_in_group' },
      { number: NOBODY, status: 'not_found' },
    ]);
    await eventually(
      async () => (await call(carol, 'GET', `/groups/${groupId}`)).status === 200,
      'carol to learn of the group',
    );
    await world.receiver.waitUntil(() =>
      hooksOf(bob, 'group.participants').some((d) => d.groupId === groupId && d.action === 'add'),
    );
    expect(hooksOf(bob, 'group.participants').find((d) => d.groupId === groupId)).toEqual({
      deviceId: bob.id,
      groupId,
      action: 'add',
      participants: [CAROL],
      by: ALICE,
    });

    const promoted = await call(alice, 'POST', `/groups/${groupId}/participants`, {
      action: 'promote',
      participants: [BOB],
    });
    expect(promoted.body.results).toEqual([{ number: BOB, status: 'ok' }]);
    expect((await call(alice, 'GET', `/groups/${groupId}`)).body.participants).toEqual([
      { number: ALICE, role: 'superadmin' },
      { number: BOB, role: 'admin' },
      { number: CAROL, role: 'member' },
    ]);
    await eventually(
      async () =>
        (await call(bob, 'GET', '/groups')).body.items.find((g: any) => g.groupId === groupId)?.isAdmin === true,
      'bob to be admin',
    );

    const demoteCreator = await call(bob, 'POST', `/groups/${groupId}/participants`, {
      action: 'demote',
      participants: [ALICE],
    });
    expect(demoteCreator.body.results).toEqual([{ number: ALICE, status: 'not_allowed' }]);

    const removed = await call(alice, 'POST', `/groups/${groupId}/participants`, {
      action: 'remove',
      participants: [CAROL],
    });
    expect(removed.body.results).toEqual([{ number: CAROL, status: 'ok' }]);
    // Carol was removed: her device leaves the group.
    await eventually(
      async () => (await call(carol, 'GET', `/groups/${groupId}`)).status === 404,
      'carol out of the group',
    );
    expect((await call(alice, 'GET', `/groups/${groupId}`)).body.size).toBe(2);
  });

  it('invites: get, revoke, join by code or link, and leave', async () => {
    const { body } = await call(alice, 'POST', '/groups', { subject: 'Invites', participants: [BOB] });
    const groupId = body.groupId as string;
    const invite = await call(alice, 'GET', `/groups/${groupId}/invite`);
    expect(invite.status).toBe(200);
    expect(invite.body.url).toBe(`https://chat.whatsapp.com/${invite.body.code}`);

    const revoked = await call(alice, 'DELETE', `/groups/${groupId}/invite`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.code).not.toBe(invite.body.code);
    const stale = await call(carol, 'POST', '/groups/join', { code: invite.body.code });
    expect(stale.status).toBe(404);

    const joined = await call(carol, 'POST', '/groups/join', { code: revoked.body.url });
    expect(joined.status).toBe(200);
    expect(joined.body).toEqual({ groupId });
    expect((await call(carol, 'GET', `/groups/${groupId}`)).body.size).toBe(3);
    await eventually(
      async () => (await call(alice, 'GET', `/groups/${groupId}`)).body.size === 3,
      'alice to see carol join',
    );

    const left = await call(carol, 'POST', `/groups/${groupId}/leave`);
    expect(left.status).toBe(200);
    expect((await call(carol, 'GET', `/groups/${groupId}`)).status).toBe(404);
    await eventually(
      async () => (await call(alice, 'GET', `/groups/${groupId}`)).body.size === 2,
      'alice to see carol leave',
    );
    const types = (await world.gateway.store.readStream(groupsStream(carol.id))).map((e) => e.type);
    expect(types.slice(-2)).toEqual(['GroupMetadataRecorded', 'GroupLeft']);
  });

  it('a message to the group reaches every member device', async () => {
    const { body } = await call(alice, 'POST', '/groups', { subject: 'Chat', participants: [BOB, CAROL] });
    const groupId = body.groupId as string;
    const sent = await call(alice, 'POST', '/send/text', { to: groupId, text: 'hello group' });
    expect(sent.status).toBe(202);
    await world.receiver.waitUntil(() =>
      [bob, carol].every((d) => hooksOf(d, 'message.received').some((m) => m.chatId === groupId)),
    );
    expect(hooksOf(bob, 'message.received').find((m) => m.chatId === groupId)).toMatchObject({
      from: ALICE,
      participant: ALICE,
      isGroup: true,
      body: 'hello group',
    });
  });

  it('refuses bad input with 4xx and changes nothing', async () => {
    const before = (await world.gateway.store.readStream(groupsStream(alice.id))).length;
    expect((await call(alice, 'GET', '/groups/not-a-group')).status).toBe(400);
    expect((await call(alice, 'GET', '/groups/123@g.us')).status).toBe(400);
    const unknown = await call(alice, 'GET', '/groups/120363999999999999@g.us');
    expect(unknown.status).toBe(404);
    expect((await call(alice, 'PATCH', '/groups/120363999999999999@g.us', { subject: 'x' })).status).toBe(404);
    expect((await call(alice, 'POST', '/groups/120363999999999999@g.us/leave')).status).toBe(404);
    expect((await call(alice, 'PATCH', '/groups/120363999999999999@g.us', {})).status).toBe(400);
    expect((await call(alice, 'POST', '/groups', { subject: '', participants: [BOB] })).status).toBe(400);
    expect((await call(alice, 'POST', '/groups', { subject: 'x', participants: [] })).status).toBe(400);
    expect((await call(alice, 'POST', '/groups/join', { code: 'no' })).status).toBe(400);
    const offlineList = await call(offline, 'GET', '/groups');
    expect(offlineList.status).toBe(409);
    expect(offlineList.body.code).toBe('session_not_online');
    expect((await call(offline, 'POST', '/groups', { subject: 'x', participants: [BOB] })).status).toBe(409);
    expect((await world.gateway.store.readStream(groupsStream(alice.id))).length).toBe(before);
  });

  it('refreshes the groups from the network when the session comes online again', async () => {
    const { body } = await call(alice, 'POST', '/groups', { subject: 'While away', participants: [BOB] });
    const groupId = body.groupId as string;
    await eventually(async () => (await call(bob, 'GET', `/groups/${groupId}`)).status === 200, 'bob in the group');
    expect((await call(bob, 'POST', '/session/close')).status).toBe(200);
    expect((await call(alice, 'PATCH', `/groups/${groupId}`, { subject: 'Changed while bob was away' })).status).toBe(
      200,
    );
    expect((await call(bob, 'POST', '/session/open')).status).toBe(202);
    await eventually(
      async () => (await call(bob, 'GET', `/groups/${groupId}`)).body.subject === 'Changed while bob was away',
      "bob's groups refreshed",
    );
  });

  it('gives the same groups from a rebuild of the read models as live', async () => {
    const views = async () =>
      Promise.all(
        [alice, bob, carol].map(async (device) => {
          const list = (await call(device, 'GET', '/groups')).body.items as Array<{ groupId: string }>;
          return {
            list,
            details: await Promise.all(list.map(async (g) => (await call(device, 'GET', `/groups/${g.groupId}`)).body)),
          };
        }),
      );
    const live = await views();
    expect(live[0].list.length).toBeGreaterThan(3);
    const { events } = await world.gateway.projections.rebuild();
    expect(events).toBeGreaterThan(0);
    expect(await views()).toEqual(live);
  });
});

describe('sandbox groups across a restart', () => {
  it("keeps the network's groups, so the refresh after the restart leaves every device its groups", async () => {
    let gateway = await startTestGateway();
    const { dataDir } = gateway;
    const alice = await createSandboxDevice(gateway.api, 'alice');
    const bob = await createSandboxDevice(gateway.api, 'bob');
    await bringOnline(gateway.api, alice, ALICE);
    await bringOnline(gateway.api, bob, BOB);
    const created = await gateway.api('POST', `/devices/${alice.id}/groups`, {
      deviceKey: alice.key,
      json: { subject: 'Lasting', participants: [BOB] },
    });
    const groupId = created.body.groupId as string;
    await gateway.api('PATCH', `/devices/${alice.id}/groups/${groupId}`, {
      deviceKey: alice.key,
      json: { subject: 'Still here' },
    });
    await gateway.close();

    gateway = await startTestGateway({ DATA_DIR: dataDir });
    try {
      for (const device of [alice, bob]) {
        await waitForState(gateway.api, device, 'online');
        // A message to the group still reaches bob: the network knows its members.
        const list = await eventually(async () => {
          const answer = await gateway.api('GET', `/devices/${device.id}/groups`, { deviceKey: device.key });
          return answer.status === 200 ? answer.body.items : undefined;
        }, 'the groups after the restart');
        expect(list).toEqual([expect.objectContaining({ groupId, subject: 'Still here', size: 2 })]);
      }
      const types = (await gateway.store.readStream(groupsStream(alice.id))).map((e) => e.type);
      expect(types).not.toContain('GroupLeft');
      const invite = await gateway.api('GET', `/devices/${alice.id}/groups/${groupId}/invite`, {
        deviceKey: alice.key,
      });
      expect(invite.status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});
