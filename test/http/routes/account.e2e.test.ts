/**
 * The account with sandbox devices: profile read and change, other numbers' about texts (cached and
 * rate-limited like checks), blocking; each change recorded in the device's history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../../support/gateway.js';
import { type TestDevice, bringOnline, createSandboxDevice } from '../../support/sessions.js';
import { accountStream } from '../../../src/account/account-events.js';

describe('the account (sandbox)', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let shop: TestDevice;
  let friend: TestDevice;
  let offline: TestDevice;

  beforeAll(async () => {
    gateway = await startTestGateway({ CONTACT_CHECK_RATE_PER_MINUTE: '30', CONTACT_CHECK_BURST: '4' });
    shop = await createSandboxDevice(gateway.api, 'shop');
    friend = await createSandboxDevice(gateway.api, 'friend');
    offline = await createSandboxDevice(gateway.api, 'offline');
    await bringOnline(gateway.api, shop, '4915100000002');
    await bringOnline(gateway.api, friend, '4915100000004');
  });
  afterAll(() => gateway?.close());

  const call = (device: TestDevice, method: string, path: string, json?: unknown) =>
    gateway.api(method, `/devices/${device.id}${path}`, {
      deviceKey: device.key,
      ...(json === undefined ? {} : { json }),
    });

  it('reads and changes the profile, recording the change', async () => {
    const before = await call(shop, 'GET', '/profile');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      phone: '4915100000002',
      about: 'Hey there! I am using the sandbox.',
      avatarUrl: expect.stringMatching(/^https:/),
    });
    const patched = await call(shop, 'PATCH', '/profile', { name: 'Shop', about: 'Open 9 to 5' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ phone: '4915100000002', name: 'Shop', about: 'Open 9 to 5' });
    const events = await gateway.store.readStream(accountStream(shop.id));
    expect(events.map((e) => [e.type, e.data])).toContainEqual([
      'ProfileChanged',
      { deviceId: shop.id, name: 'Shop', about: 'Open 9 to 5' },
    ]);
    expect((await call(shop, 'PATCH', '/profile', {})).status).toBe(400);
    expect((await call(shop, 'PATCH', '/profile', { name: 'x'.repeat(26) })).status).toBe(400);
  });

  it('answers about texts by the sandbox rule, or as another device set it; cached and rate-limited', async () => {
    expect((await call(friend, 'GET', '/contacts/4915100000002/about')).body).toEqual({
      number: '4915100000002',
      about: 'Open 9 to 5',
    });
    expect((await call(friend, 'GET', '/contacts/4915100000013/about')).body).toEqual({
      number: '4915100000013',
      about: null,
    });
    expect((await call(friend, 'GET', '/contacts/4915100000016/about')).body).toEqual({
      number: '4915100000016',
      about: 'Hey there! I am using the sandbox.',
    });
    // Cached: asking again does not count.
    for (let i = 0; i < 5; i++) expect((await call(friend, 'GET', '/contacts/4915100000016/about')).status).toBe(200);
    expect((await call(friend, 'GET', '/contacts/4915100000018/about')).status).toBe(200);
    const limited = await call(friend, 'GET', '/contacts/4915100000020/about');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await call(friend, 'GET', '/contacts/123/about')).status).toBe(400);
  });

  it('blocks, lists and unblocks numbers, idempotently', async () => {
    expect((await call(shop, 'PUT', '/contacts/4915177777777/block')).body).toEqual({ blocked: true });
    expect((await call(shop, 'PUT', '/contacts/4915177777777/block')).body).toEqual({ blocked: true });
    expect((await call(shop, 'PUT', '/contacts/4915166666666/block')).status).toBe(200);
    expect((await call(shop, 'GET', '/contacts/blocked')).body).toEqual({ items: ['4915166666666', '4915177777777'] });
    expect((await call(shop, 'DELETE', '/contacts/4915177777777/block')).body).toEqual({ blocked: false });
    expect((await call(shop, 'GET', '/contacts/blocked')).body).toEqual({ items: ['4915166666666'] });
    const types = (await gateway.store.readStream(accountStream(shop.id))).map((e) => e.type);
    expect(types.filter((t) => t !== 'ProfileChanged')).toEqual([
      'ContactBlocked',
      'ContactBlocked',
      'ContactUnblocked',
    ]);
    // The list is readable offline too.
    expect((await call(offline, 'GET', '/contacts/blocked')).body).toEqual({ items: [] });
  });

  it('gives the same blocklist from a rebuild of the read models', async () => {
    const live = (await call(shop, 'GET', '/contacts/blocked')).body;
    await gateway.projections.rebuild();
    expect((await call(shop, 'GET', '/contacts/blocked')).body).toEqual(live);
  });

  it('needs an online session', async () => {
    for (const [method, path] of [
      ['GET', '/profile'],
      ['GET', '/contacts/4915100000002/about'],
      ['PUT', '/contacts/4915100000002/block'],
    ] as const) {
      const answer = await call(offline, method, path);
      expect(answer.status, path).toBe(409);
      expect(answer.body.code).toBe('session_not_online');
    }
    expect((await call(offline, 'PATCH', '/profile', { name: 'x' })).status).toBe(409);
  });
});
