/**
 * Contacts over HTTP with sandbox devices: number checks and avatars by the sandbox's rules, the list
 * of numbers written to and heard from (search, pagination), the session and rate-limit refusals, a
 * deleted device's contacts, and the read model rebuilt from position 0.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxDevice, createDevice, goOffline, goOnline, send } from '../../outbox/support/sandbox-devices.js';
import { eventually } from '../../support/eventually.js';
import {
  type ContactsGateway,
  contactTables,
  listAll,
  startContactsGateway,
} from '../../contacts/support/contacts-gateway.js';

describe('contacts of sandbox devices', () => {
  let gateway: ContactsGateway;
  let shop: SandboxDevice;

  beforeAll(async () => {
    gateway = await startContactsGateway();
    shop = await createDevice(gateway.api, 'shop-1', '4915100000001');
    await goOnline(gateway.api, shop);
  });
  afterAll(() => gateway?.close());

  const get = (device: SandboxDevice, path: string) =>
    gateway.api('GET', `/devices/${device.id}${path}`, { deviceKey: device.key });

  describe('check', () => {
    it('says a number exists, with its jid', async () => {
      const answer = await get(shop, '/contacts/4915112345678/check');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ number: '4915112345678', exists: true, jid: '4915112345678@s.whatsapp.net' });
    });

    it('says a number ending in 0000 does not exist', async () => {
      const answer = await get(shop, '/contacts/4915112340000/check');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ number: '4915112340000', exists: false });
    });

    it('reads a number as people write it: +, spaces, dashes, a JID', async () => {
      for (const written of ['%2B49%20151%201234-5678', '4915112345678%40s.whatsapp.net', '(49)%20151-12345678']) {
        const answer = await get(shop, `/contacts/${written}/check`);
        expect(answer.status, written).toBe(200);
        expect(answer.body.number).toBe('4915112345678');
      }
      const national = await get(shop, '/contacts/015112345678/check');
      expect(national.body.detail).toContain('country code');
    });

    it('refuses what is not a number', async () => {
      for (const bad of ['123456', '1234567890123456', '49151abc45678', '015112345678']) {
        const answer = await get(shop, `/contacts/${bad}/check`);
        expect(answer.status, bad).toBe(400);
        expect(answer.body.code).toBe('invalid_request');
      }
    });
  });

  describe('avatar', () => {
    it('is a stable URL for an even last digit', async () => {
      const first = await get(shop, '/contacts/4915112345678/avatar');
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ number: '4915112345678', url: expect.stringMatching(/^https:\/\//) });
      expect((await get(shop, '/contacts/4915112345678/avatar')).body).toEqual(first.body);
    });

    it('is null for an odd last digit and for a number that does not exist', async () => {
      expect((await get(shop, '/contacts/4915112345677/avatar')).body).toEqual({ number: '4915112345677', url: null });
      expect((await get(shop, '/contacts/4915112340000/avatar')).body).toEqual({ number: '4915112340000', url: null });
    });
  });

  describe('list', () => {
    const writtenTo = ['4915122220002', '4915122220004', '4915133330000', '33612345678'];
    const heardFrom = ['4915122220001', '4477001122334'];

    beforeAll(async () => {
      for (const to of writtenTo) await send(gateway.api, shop, to, `hello ${to}`);
      for (const from of heardFrom) {
        const inbound = await gateway.api('POST', `/sandbox/devices/${shop.id}/inbound`, {
          admin: true,
          json: { from, body: 'hi' },
        });
        expect(inbound.status).toBe(202);
      }
      // Inbound messages are recorded shortly after the 202.
      await eventually(async () => {
        const { items } = await listAll(gateway.api, shop.id, shop.key);
        return heardFrom.every((n) => items.some((item) => item.number === n)) || undefined;
      }, 'the senders in the contacts');
    });

    it('holds every number the device wrote to and heard from, ordered by number', async () => {
      const { items } = await listAll(gateway.api, shop.id, shop.key);
      const expected = [...writtenTo, ...heardFrom].sort();
      expect(items.map((item) => item.number)).toEqual(expected);
      for (const item of items) expect(item).toEqual({ number: item.number, jid: `${item.number}@s.whatsapp.net` });
    });

    it('shows a number written to as soon as the send is answered', async () => {
      await send(gateway.api, shop, '390612345678', 'ciao');
      const { items } = await listAll(gateway.api, shop.id, shop.key, { q: '390612345678' });
      expect(items.map((item) => item.number)).toEqual(['390612345678']);
    });

    it('pages with cursors, without gaps or repeats', async () => {
      const all = (await listAll(gateway.api, shop.id, shop.key)).items;
      const paged = await listAll(gateway.api, shop.id, shop.key, { limit: 2 });
      expect(paged.items).toEqual(all);
      expect(paged.pages).toBe(Math.ceil(all.length / 2));
      const first = await get(shop, '/contacts?limit=2');
      expect(first.body.items).toHaveLength(2);
      expect(typeof first.body.nextCursor).toBe('string');
      const last = await get(shop, `/contacts?limit=${all.length}`);
      expect(last.body.nextCursor).toBeNull();
    });

    it('searches numbers with q, also written as a phone number, and pages the matches', async () => {
      const byDigits = await listAll(gateway.api, shop.id, shop.key, { q: '491512222' });
      expect(byDigits.items.map((item) => item.number)).toEqual(['4915122220001', '4915122220002', '4915122220004']);
      const written = await listAll(gateway.api, shop.id, shop.key, { q: '+49 151 2222-0', limit: 1 });
      expect(written.items.map((item) => item.number)).toEqual(['4915122220001', '4915122220002', '4915122220004']);
      expect(written.pages).toBe(3);
      expect((await listAll(gateway.api, shop.id, shop.key, { q: 'nobody' })).items).toEqual([]);
      // An empty search is no search (a client that always sends `q=`).
      expect((await get(shop, '/contacts?q=')).body.items).toEqual((await get(shop, '/contacts')).body.items);
    });

    it('refuses a cursor it did not give out and a bad limit', async () => {
      expect((await get(shop, '/contacts?cursor=not-a-cursor')).status).toBe(400);
      expect((await get(shop, '/contacts?limit=0')).status).toBe(400);
      expect((await get(shop, '/contacts?limit=501')).status).toBe(400);
      expect((await get(shop, '/contacts?unknown=1')).status).toBe(400);
    });

    it("keeps each device's contacts to itself", async () => {
      const other = await createDevice(gateway.api, 'shop-2', '4915100000002');
      expect((await listAll(gateway.api, other.id, other.key)).items).toEqual([]);
      expect((await gateway.api('GET', `/devices/${shop.id}/contacts`, { deviceKey: other.key })).status).toBe(401);
    });
  });

  describe('needs an online session', () => {
    it('answers 409 session_not_online for checks and avatars, while the list still answers', async () => {
      const closed = await createDevice(gateway.api, 'closed-1', '4915100000003');
      for (const path of ['/contacts/4915112345678/check', '/contacts/4915112345678/avatar']) {
        const answer = await get(closed, path);
        expect(answer.status, path).toBe(409);
        expect(answer.headers.get('content-type')).toContain('application/problem+json');
        expect(answer.body).toMatchObject({ code: 'session_not_online', detail: expect.stringContaining('closed') });
      }
      expect((await get(closed, '/contacts')).status).toBe(200);
    });

    it('refuses also numbers checked while the session was online, once it is closed', async () => {
      const device = await createDevice(gateway.api, 'closing-1', '4915100000004');
      await goOnline(gateway.api, device);
      expect((await get(device, '/contacts/4915112345678/check')).status).toBe(200);
      await goOffline(gateway.api, device);
      expect((await get(device, '/contacts/4915112345678/check')).body.code).toBe('session_not_online');
    });

    it('answers 404 for a device that does not exist (admin key)', async () => {
      const answer = await gateway.api('GET', '/devices/ghost/contacts/4915112345678/check', { admin: true });
      expect(answer.status).toBe(404);
    });
  });

  describe('rate limit of fresh checks', () => {
    it('allows a burst of 10 fresh checks, then 429 with Retry-After; cached answers still answer', async () => {
      const device = await createDevice(gateway.api, 'bulk-1', '4915100000005');
      await goOnline(gateway.api, device);
      const numbers = Array.from({ length: 10 }, (_, i) => `4917000001${String(i).padStart(2, '0')}`);
      for (const number of numbers) expect((await get(device, `/contacts/${number}/check`)).status, number).toBe(200);

      const refused = await get(device, '/contacts/4917000000099/check');
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(refused.body.code).toBe('rate_limited');
      const retryAfter = Number(refused.headers.get('retry-after'));
      // The burst comes back within the time the steady rate (30 a minute) takes to earn 10: 20 s.
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(20);

      for (const number of numbers) {
        const cached = await get(device, `/contacts/${number}/check`);
        expect(cached.status, number).toBe(200);
        expect(cached.body).toEqual({ number, exists: true, jid: `${number}@s.whatsapp.net` });
      }
      // Avatar lookups draw on the same allowance.
      const avatar = await get(device, '/contacts/4917000000099/avatar');
      expect(avatar.status).toBe(429);
      expect(avatar.body.code).toBe('rate_limited');
      expect(Number(avatar.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Another device has its own allowance.
      expect((await get(shop, '/contacts/4917000000099/check')).status).toBe(200);
    });
  });

  describe('rate limit of fresh avatar lookups', () => {
    it('answers at most a burst of 100 fresh avatar lookups, then 429', async () => {
      const device = await createDevice(gateway.api, 'bulk-2', '4915100000009');
      await goOnline(gateway.api, device);
      const statuses = [];
      for (let i = 0; i < 100; i++)
        statuses.push((await get(device, `/contacts/49170000020${String(i).padStart(2, '0')}/avatar`)).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(90);
    });
  });

  describe('a deleted device', () => {
    it('takes its contacts with it', async () => {
      const device = await createDevice(gateway.api, 'gone-1', '4915100000006');
      await send(gateway.api, device, '4915144440000', 'bye');
      expect((await listAll(gateway.api, device.id, device.key)).items.map((item) => item.number)).toEqual([
        '4915144440000',
      ]);
      expect((await gateway.api('DELETE', `/devices/${device.id}`, { admin: true })).status).toBe(204);
      expect((await gateway.api('GET', `/devices/${device.id}/contacts`, { admin: true })).status).toBe(404);
      expect((await gateway.api('GET', `/devices/${device.id}/contacts`, { deviceKey: device.key })).status).toBe(401);
      expect(contactTables(gateway.dataDir).contacts).not.toContainEqual(
        expect.objectContaining({ device_id: device.id }),
      );
    });
  });

  describe('rebuild', () => {
    it('gives the same read model from position 0 as the live one', async () => {
      const live = contactTables(gateway.dataDir);
      const liveList = await listAll(gateway.api, shop.id, shop.key);
      expect(live.contacts.length).toBeGreaterThan(5);
      expect(live.deleted).toEqual([{ device_id: 'gone-1' }]);
      const { events } = await gateway.projections.rebuild();
      expect(events).toBeGreaterThan(0);
      expect(contactTables(gateway.dataDir)).toEqual(live);
      expect(await listAll(gateway.api, shop.id, shop.key)).toEqual(liveList);
    });
  });
});

describe('fresh checks over time and across a restart (sandbox)', () => {
  let gateway: ContactsGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const check = (g: ContactsGateway, device: SandboxDevice, number: string) =>
    g.api('GET', `/devices/${device.id}/contacts/${number}/check`, { deviceKey: device.key });

  it('allows the next fresh check once Retry-After has passed', async () => {
    // One fresh check every 2 s, never two back to back.
    gateway = await startContactsGateway({ env: { CONTACT_CHECK_RATE_PER_MINUTE: '30', CONTACT_CHECK_BURST: '1' } });
    const device = await createDevice(gateway.api, 'slow-1', '4915100000007');
    await goOnline(gateway.api, device);
    expect((await check(gateway, device, '4915155550001')).status).toBe(200);
    const refused = await check(gateway, device, '4915155550002');
    expect(refused.status).toBe(429);
    expect(['1', '2']).toContain(refused.headers.get('retry-after'));
    expect((await check(gateway, device, '4915155550001')).status).toBe(200);
    const g = gateway;
    await eventually(
      async () => ((await check(g, device, '4915155550002')).status === 200 ? true : undefined),
      'the next fresh check',
      10_000,
    );
  });

  it('keeps cached answers across a restart (the allowance starts afresh)', async () => {
    const env = { CONTACT_CHECK_RATE_PER_MINUTE: '1', CONTACT_CHECK_BURST: '1' };
    gateway = await startContactsGateway({ env });
    const device = await createDevice(gateway.api, 'slow-2', '4915100000008');
    await goOnline(gateway.api, device);
    expect((await check(gateway, device, '4915155550001')).status).toBe(200);
    expect((await check(gateway, device, '4915155550002')).status).toBe(429);

    // Restart on the same data: the session is resumed.
    await gateway.close();
    const restarted = await startContactsGateway({ env, dataDir: gateway.dataDir });
    gateway = restarted;
    await eventually(async () => {
      const state = await restarted.api('GET', `/devices/${device.id}/session/state`, { deviceKey: device.key });
      return state.body.state === 'online' && restarted.sessions.connection(device.id) ? true : undefined;
    }, 'the resumed session');
    // From the cache: the one fresh check of this minute is left for a new number.
    expect((await check(restarted, device, '4915155550001')).body).toEqual({
      number: '4915155550001',
      exists: true,
      jid: '4915155550001@s.whatsapp.net',
    });
    expect((await check(restarted, device, '4915155550002')).status).toBe(200);
    const refused = await check(restarted, device, '4915155550003');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});
