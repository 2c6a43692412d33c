/**
 * Presence of contacts (API Part 3) with sandbox devices: a subscription reports the other device's presence
 * (online now, offline with its last-seen time) as `presence.update`, and GET keeps the last state and last seen.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useSandboxWorld } from '../support/sandbox-world.js';
import { type TestDevice, createSandboxDevice } from '../support/sessions.js';

const ALICE = '4915100000031';
const BOB = '4915100000032';
const NOBODY_ONLINE = '4915100000039';

describe('presence of contacts (sandbox)', () => {
  const world = useSandboxWorld({
    online: { alice: ALICE, bob: BOB },
    hookEvents: ['presence.update'],
    hooked: ['alice'],
  });
  const { call } = world;
  const { alice, bob } = world.devices;
  let offline: TestDevice;
  beforeAll(async () => {
    offline = await createSandboxDevice(world.api, 'offline');
  });

  const presences = () =>
    world.receiver
      .of(alice.id)
      .filter((r) => r.envelope.event === 'presence.update')
      .map((r) => r.envelope.data);

  it('before anything is seen, the presence is unknown', async () => {
    expect((await call(alice, 'GET', `/contacts/${BOB}/presence`)).body).toEqual({ state: 'unknown', lastSeen: null });
  });

  it('subscribes, hears the contact online, then offline with the last-seen time, and keeps the last one', async () => {
    const subscribed = await call(alice, 'POST', `/contacts/${BOB}/presence`);
    expect(subscribed.status).toBe(200);
    expect(subscribed.body).toEqual({ number: BOB, subscribed: true });
    await world.receiver.waitUntil(() => presences().length === 1);
    expect(presences()[0]).toEqual({ deviceId: alice.id, chatId: BOB, from: BOB, state: 'available' });
    expect((await call(alice, 'GET', `/contacts/${BOB}/presence`)).body).toEqual({
      state: 'available',
      lastSeen: null,
    });

    // Bob's account goes offline.
    expect((await call(bob, 'POST', '/presence', { state: 'unavailable' })).status).toBe(200);
    await world.receiver.waitUntil(() => presences().length === 2);
    const gone = presences()[1];
    expect(gone).toMatchObject({ from: BOB, state: 'unavailable', lastSeen: expect.any(String) });
    const read = await call(alice, 'GET', `/contacts/${BOB}/presence`);
    expect(read.body).toEqual({ state: 'unavailable', lastSeen: gone.lastSeen });

    // And comes back: online again, last seen kept.
    expect((await call(bob, 'POST', '/presence', { state: 'available' })).status).toBe(200);
    await world.receiver.waitUntil(() => presences().length === 3);
    expect((await call(alice, 'GET', `/contacts/${BOB}/presence`)).body).toEqual({
      state: 'available',
      lastSeen: gone.lastSeen,
    });
  });

  it('a contact with no device online is reported unavailable', async () => {
    expect((await call(alice, 'POST', `/contacts/${NOBODY_ONLINE}/presence`)).status).toBe(200);
    await world.receiver.waitUntil(() => presences().some((p) => p.from === NOBODY_ONLINE));
    expect((await call(alice, 'GET', `/contacts/${NOBODY_ONLINE}/presence`)).body.state).toBe('unavailable');
  });

  it('refuses a subscription without an online session (409) and a number of the wrong shape (400)', async () => {
    const refused = await call(offline, 'POST', `/contacts/${BOB}/presence`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('session_not_online');
    expect((await call(alice, 'POST', '/contacts/12/presence')).status).toBe(400);
    expect((await call(alice, 'GET', '/contacts/abc/presence')).status).toBe(400);
  });
});
