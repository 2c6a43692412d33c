import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, type Api, startTestGateway } from '../support/gateway.js';

type Who = 'none' | 'wrong' | 'admin' | 'adminBearer' | 'keyA' | 'keyABearer' | 'keyB' | 'deleted';

describe('the auth matrix', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    gateway = await startTestGateway();
    api = gateway.api;
    for (const id of ['dev-a', 'dev-b', 'dev-deleted']) {
      keys[id] = (await api('POST', '/devices', { admin: true, json: { id, name: id } })).body.deviceKey;
    }
    await api('DELETE', '/devices/dev-deleted', { admin: true });
  });
  afterAll(() => gateway.close());

  const headersOf = (who: Who): Record<string, string> => {
    switch (who) {
      case 'none':
        return {};
      case 'wrong':
        return {
          'x-admin-key': 'ak_not_the_key_at_all_000000000000',
          'x-device-key': 'dk_not_a_key_000000000000000000',
        };
      case 'admin':
        return { 'x-admin-key': ADMIN_KEY };
      case 'adminBearer':
        return { authorization: `Bearer ${ADMIN_KEY}` };
      case 'keyA':
        return { 'x-device-key': keys['dev-a'] };
      case 'keyABearer':
        return { authorization: `Bearer ${keys['dev-a']}` };
      case 'keyB':
        return { 'x-device-key': keys['dev-b'] };
      case 'deleted':
        return { 'x-device-key': keys['dev-deleted'] };
    }
  };

  const adminRoutes: Array<[string, string, unknown?]> = [
    ['POST', '/devices', { name: 'x' }],
    ['GET', '/devices'],
    ['PATCH', '/devices/dev-a', {}],
    ['DELETE', '/devices/dev-a'],
    ['PATCH', '/devices/no-such-device', {}],
    // Reading a device and its history are admin routes too (README, "Which key for what").
    ['GET', '/devices/dev-a'],
    ['GET', '/devices/dev-a/events'],
    ['GET', '/devices/dev-b/events'],
  ];

  it.each<[Who, number]>([
    ['none', 401],
    ['wrong', 401],
    ['keyA', 403],
    ['keyABearer', 403],
    ['keyB', 403],
    ['deleted', 401],
  ])('admin routes with %s → %i', async (who, status) => {
    for (const [method, path, json] of adminRoutes) {
      const answer = await api(method, path, { headers: headersOf(who), json });
      expect(answer.status, `${method} ${path}`).toBe(status);
      expect(answer.body.code).toBe(status === 401 ? 'unauthorized' : 'forbidden');
    }
  });

  it('admin routes accept the admin key in X-Admin-Key and as a Bearer token', async () => {
    for (const who of ['admin', 'adminBearer'] as const) {
      expect((await api('GET', '/devices/dev-a', { headers: headersOf(who) })).status).toBe(200);
      expect((await api('GET', '/devices', { headers: headersOf(who) })).status).toBe(200);
    }
  });

  it.each<[Who, string, number]>([
    ['none', 'dev-a', 401],
    ['wrong', 'dev-a', 401],
    ['keyA', 'dev-a', 200],
    ['keyABearer', 'dev-a', 200],
    ['keyB', 'dev-a', 401],
    ['keyA', 'dev-b', 401],
    ['keyA', 'no-such-device', 401],
    ['keyA', 'dev-deleted', 401],
    ['deleted', 'dev-deleted', 401],
    ['admin', 'dev-a', 200],
    ['adminBearer', 'dev-b', 200],
    ['admin', 'no-such-device', 404],
  ])('device route with %s on %s → %i', async (who, deviceId, status) => {
    const answer = await api('GET', `/devices/${deviceId}/session/state`, { headers: headersOf(who) });
    expect(answer.status).toBe(status);
  });

  it.each<[Who, string, number]>([
    ['keyA', 'dev-a', 403],
    ['keyABearer', 'dev-a', 403],
    ['keyB', 'dev-a', 403],
    ['keyA', 'dev-b', 403],
    ['keyA', 'dev-deleted', 403],
    ['deleted', 'dev-deleted', 401],
    ['none', 'dev-a', 401],
    ['admin', 'dev-b', 200],
    ['adminBearer', 'dev-a', 200],
    ['admin', 'dev-deleted', 200],
  ])(
    'a device and its history are read with the admin key only (a device key is 403 whichever device): %s on %s → %i',
    async (who, deviceId, status) => {
      const history = await api('GET', `/devices/${deviceId}/events`, { headers: headersOf(who) });
      expect(history.status, 'events').toBe(status);
      if (deviceId === 'dev-deleted') return; // a deleted device keeps its history, not its record
      const device = await api('GET', `/devices/${deviceId}`, { headers: headersOf(who) });
      expect(device.status, 'device').toBe(status);
      if (status === 200) {
        expect(device.body.id).toBe(deviceId);
        expect(
          history.body.items.every(
            (event: { data: { deviceId?: string } }) =>
              event.data.deviceId === undefined || event.data.deviceId === deviceId,
          ),
        ).toBe(true);
      }
    },
  );

  it('a device key cannot tell whether another device exists', async () => {
    const existing = await api('GET', '/devices/dev-b/session/state', { headers: headersOf('keyA') });
    const missing = await api('GET', '/devices/never-was/session/state', { headers: headersOf('keyA') });
    const invalidId = await api('GET', '/devices/!!bad!!/session/state', { headers: headersOf('keyA') });
    const strip = (body: Record<string, unknown>) => ({ ...body, requestId: undefined });
    expect(strip(existing.body)).toEqual(strip(missing.body));
    expect(strip(invalidId.body)).toEqual(strip(missing.body));
    expect([existing.status, missing.status, invalidId.status]).toEqual([401, 401, 401]);
  });

  it('authenticates before it validates', async () => {
    const answer = await api('POST', '/devices', { json: { bogus: true } });
    expect(answer.status).toBe(401);
  });

  it('leaves /health, /openapi.json and /docs public', async () => {
    for (const path of ['/health', '/openapi.json', '/docs']) expect((await api('GET', path)).status).toBe(200);
  });
});
