/**
 * Groups, continued (API Part 3), over HTTP with sandbox devices: disappearing messages, join approval and who
 * adds; the group picture (set, read, remove; JPEG or PNG only); join requests (a join to a group with approval
 * makes one, `group.join_request`, listed, approved or rejected); `mentions: "all"` in a group send.
 */
import { describe, expect, it } from 'vitest';
import { useSandboxWorld } from '../support/sandbox-world.js';
import { eventually } from '../support/eventually.js';
import { groupsStream } from '../../src/groups/group-events.js';

const ALICE = '4915100000011';
const BOB = '4915100000012';
const CAROL = '4915100000013';
const DAVE = '4915100000014';

/** A 1×1 PNG and a 1×1 GIF. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const GIF = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

describe('groups, continued (sandbox)', () => {
  const world = useSandboxWorld({
    env: { SANDBOX_DELIVERED_DELAY_MS: '10000' },
    online: { alice: ALICE, bob: BOB, carol: CAROL, dave: DAVE },
    hookEvents: ['group.updated', 'group.join_request', 'message.received'],
  });
  const { call, hooksOf } = world;
  const { alice, bob, carol, dave } = world.devices;

  const newGroup = async (subject: string, participants: string[]) => {
    const created = await call(alice, 'POST', '/groups', { subject, participants });
    expect(created.status).toBe(201);
    return created.body.groupId as string;
  };

  it('sets disappearing messages, join approval and who adds; the view and the other members show them', async () => {
    const groupId = await newGroup('Settings', [BOB]);
    const fresh = await call(alice, 'GET', `/groups/${groupId}`);
    expect(fresh.body).toMatchObject({ ephemeral: 0, joinApproval: false, membersCanAdd: false });

    const patched = await call(alice, 'PATCH', `/groups/${groupId}`, {
      ephemeral: 604800,
      joinApproval: true,
      membersCanAdd: true,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ ephemeral: 604800, joinApproval: true, membersCanAdd: true });
    expect((await call(alice, 'GET', '/groups')).body.items[0]).toMatchObject({ ephemeral: 604800 });
    const events = await world.gateway.store.readStream(groupsStream(alice.id));
    expect(events.at(-1)).toMatchObject({
      type: 'GroupUpdated',
      data: { groupId, ephemeral: 604800, joinApproval: true, membersCanAdd: true, by: ALICE },
    });

    await world.receiver.waitUntil(() => hooksOf(bob, 'group.updated').some((d) => d.groupId === groupId));
    expect(hooksOf(bob, 'group.updated').find((d) => d.groupId === groupId)).toEqual({
      deviceId: bob.id,
      groupId,
      ephemeral: 604800,
      joinApproval: true,
      membersCanAdd: true,
      by: ALICE,
    });
    await eventually(
      async () => (await call(bob, 'GET', `/groups/${groupId}`)).body.ephemeral === 604800,
      "bob's view to show the timer",
    );
    // Not an admin.
    const refused = await call(bob, 'PATCH', `/groups/${groupId}`, { ephemeral: 0 });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('not_group_admin');
  });

  it('refuses an ephemeral value outside the set with 400, and changes nothing', async () => {
    const groupId = await newGroup('Bad timer', [BOB]);
    const before = (await world.gateway.store.readStream(groupsStream(alice.id))).length;
    for (const ephemeral of [3600, -1, '86400', 86400.5, null]) {
      const answer = await call(alice, 'PATCH', `/groups/${groupId}`, { ephemeral });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
    }
    expect((await call(alice, 'PATCH', `/groups/${groupId}`, { joinApproval: 'yes' })).status).toBe(400);
    expect((await world.gateway.store.readStream(groupsStream(alice.id))).length).toBe(before);
    expect((await call(alice, 'GET', `/groups/${groupId}`)).body.ephemeral).toBe(0);
  });

  it('sets, reads and removes the picture (JPEG or PNG only), recorded on the groups stream', async () => {
    const groupId = await newGroup('Picture', [BOB]);
    expect((await call(alice, 'GET', `/groups/${groupId}/picture`)).body).toEqual({ url: null });

    const set = await call(alice, 'PUT', `/groups/${groupId}/picture`, { base64: PNG });
    expect(set.status).toBe(200);
    const read = await call(alice, 'GET', `/groups/${groupId}/picture`);
    expect(read.status).toBe(200);
    expect(read.body.url).toMatch(/^https:\/\/sandbox\.invalid\/groups\//);
    expect((await call(bob, 'GET', `/groups/${groupId}/picture`)).body.url).toBe(read.body.url);
    expect((await world.gateway.store.readStream(groupsStream(alice.id))).at(-1)).toMatchObject({
      type: 'GroupPictureChanged',
      data: { groupId, removed: false, by: ALICE },
    });

    // Multipart, like /send/image.
    const form = new FormData();
    form.append('file', new Blob([Buffer.from(PNG, 'base64')], { type: 'image/png' }), 'p.png');
    const multipart = await fetch(`${world.gateway.url}/devices/${alice.id}/groups/${groupId}/picture`, {
      method: 'PUT',
      headers: { 'x-device-key': alice.key },
      body: form,
    });
    expect(multipart.status).toBe(200);

    const before = (await world.gateway.store.readStream(groupsStream(alice.id))).length;
    const gif = await call(alice, 'PUT', `/groups/${groupId}/picture`, { base64: GIF });
    expect(gif.status).toBe(415);
    expect(gif.body.code).toBe('unsupported_media_type');
    const text = await call(alice, 'PUT', `/groups/${groupId}/picture`, {
      base64: Buffer.from('not an image').toString('base64'),
    });
    expect(text.status).toBe(415);
    expect((await call(alice, 'PUT', `/groups/${groupId}/picture`, {})).status).toBe(400);
    expect((await call(bob, 'PUT', `/groups/${groupId}/picture`, { base64: PNG })).status).toBe(403);
    expect((await world.gateway.store.readStream(groupsStream(alice.id))).length).toBe(before);

    const removed = await call(alice, 'DELETE', `/groups/${groupId}/picture`);
    expect(removed.status).toBe(200);
    expect((await call(alice, 'GET', `/groups/${groupId}/picture`)).body).toEqual({ url: null });
    expect((await world.gateway.store.readStream(groupsStream(alice.id))).at(-1)).toMatchObject({
      type: 'GroupPictureChanged',
      data: { groupId, removed: true },
    });
  });

  it('a join to a group with approval makes a request: group.join_request, listed, approved or rejected', async () => {
    const groupId = await newGroup('Approval', [BOB]);
    expect((await call(alice, 'PATCH', `/groups/${groupId}`, { joinApproval: true })).status).toBe(200);
    const { code } = (await call(alice, 'GET', `/groups/${groupId}/invite`)).body as { code: string };

    const asked = await call(carol, 'POST', '/groups/join', { code });
    expect(asked.status).toBe(200);
    expect(asked.body).toEqual({ groupId, requested: true });
    expect((await call(carol, 'GET', `/groups/${groupId}`)).status).toBe(404);
    expect((await call(dave, 'POST', '/groups/join', { code })).body).toEqual({ groupId, requested: true });

    await world.receiver.waitUntil(
      () => hooksOf(alice, 'group.join_request').filter((d) => d.groupId === groupId).length === 2,
    );
    expect(hooksOf(alice, 'group.join_request').filter((d) => d.groupId === groupId)).toEqual([
      { deviceId: alice.id, groupId, number: CAROL, action: 'created' },
      { deviceId: alice.id, groupId, number: DAVE, action: 'created' },
    ]);
    // Only admins hear of requests.
    expect(hooksOf(bob, 'group.join_request').filter((d) => d.groupId === groupId)).toEqual([]);

    const listed = await call(alice, 'GET', `/groups/${groupId}/requests`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((r: { number: string }) => r.number).sort()).toEqual([CAROL, DAVE]);
    expect(Date.parse(listed.body.items[0].requestedAt)).not.toBeNaN();
    expect((await call(bob, 'GET', `/groups/${groupId}/requests`)).status).toBe(403);

    const approved = await call(alice, 'POST', `/groups/${groupId}/requests`, {
      action: 'approve',
      participants: [CAROL, '4915100000099'],
    });
    expect(approved.status).toBe(200);
    expect(approved.body.results).toEqual([
      { number: CAROL, status: 'ok' },
      { number: '4915100000099', status: 'not_found' },
    ]);
    expect((await call(alice, 'GET', `/groups/${groupId}`)).body.size).toBe(3);
    await eventually(
      async () => (await call(carol, 'GET', `/groups/${groupId}`)).status === 200,
      'carol to be in the group',
    );

    const rejected = await call(alice, 'POST', `/groups/${groupId}/requests`, {
      action: 'reject',
      participants: [DAVE],
    });
    expect(rejected.body.results).toEqual([{ number: DAVE, status: 'ok' }]);
    expect((await call(alice, 'GET', `/groups/${groupId}/requests`)).body.items).toEqual([]);
    expect((await call(dave, 'GET', `/groups/${groupId}`)).status).toBe(404);
    // Rejected, Dave asks again: a new request, announced again (the stream no longer holds the first one open).
    expect((await call(dave, 'POST', '/groups/join', { code })).body).toEqual({ groupId, requested: true });
    await world.receiver.waitUntil(
      () => hooksOf(alice, 'group.join_request').filter((d) => d.groupId === groupId).length === 3,
      10_000,
      "Dave's second request",
    );
    expect(hooksOf(alice, 'group.join_request').filter((d) => d.groupId === groupId)[2]).toEqual({
      deviceId: alice.id,
      groupId,
      number: DAVE,
      action: 'created',
    });
    expect(
      (await call(alice, 'POST', `/groups/${groupId}/requests`, { action: 'maybe', participants: [DAVE] })).status,
    ).toBe(400);
  });

  it('mentions: "all" mentions every participant the groups read model knows at send time', async () => {
    const groupId = await newGroup('Everyone', [BOB, CAROL]);
    const sent = await call(alice, 'POST', '/send/text', { to: groupId, text: 'hello @all', mentions: 'all' });
    expect(sent.status).toBe(202);
    await world.receiver.waitUntil(() => hooksOf(bob, 'message.received').some((m) => m.chatId === groupId));
    const received = hooksOf(bob, 'message.received').find((m) => m.chatId === groupId)!;
    expect([...(received.mentions as string[])].sort()).toEqual([ALICE, BOB, CAROL]);

    // Not a group, or a group the account is not in: refused, nothing queued.
    const direct = await call(alice, 'POST', '/send/text', { to: BOB, text: 'hi', mentions: 'all' });
    expect(direct.status).toBe(400);
    const unknown = await call(alice, 'POST', '/send/text', {
      to: '120363999999999999@g.us',
      text: 'hi',
      mentions: 'all',
    });
    expect(unknown.status).toBe(404);
    expect((await call(alice, 'POST', '/send/text', { to: groupId, text: 'x', mentions: 'some' })).status).toBe(400);
  });
});
