import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStream } from '../../../src/devices/device-events.js';
import { type Api, startTestGateway } from '../../support/gateway.js';

describe('devices over HTTP', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  /** When the gateway started, at the earliest and at the latest. */
  let startedFrom: number;
  let startedBy: number;

  beforeAll(async () => {
    startedFrom = Date.now();
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
    startedBy = Date.now();
    api = gateway.api;
  });
  afterAll(() => gateway.close());

  it('creates a device with a client id and shows its key once', async () => {
    const created = await api('POST', '/devices', {
      admin: true,
      json: { id: 'shop-1', name: 'Shop', engine: 'baileys', metadata: { team: 'sales', n: [1, 2] } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'shop-1',
      name: 'Shop',
      engine: 'baileys',
      metadata: { team: 'sales', n: [1, 2] },
      session: { state: 'closed' },
    });
    expect(created.body.deviceKey).toMatch(/^dk_[A-Za-z0-9_-]{22,}$/);
    // ≥ 128 random bits: 192 bits in base64url.
    expect(Buffer.from(created.body.deviceKey.slice(3), 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    expect(Date.parse(created.body.createdAt)).not.toBeNaN();
    const read = await api('GET', '/devices/shop-1', { admin: true });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('deviceKey');
    expect(read.body).toEqual({ ...created.body, deviceKey: undefined });
  });

  it('generates an id and uses the default engine', async () => {
    const created = await api('POST', '/devices', { admin: true, json: { name: 'Generated' } });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/);
    expect(created.body.engine).toBe('sandbox');
    expect(created.body.metadata).toEqual({});
  });

  it('refuses an id in use, and an id once used by a deleted device', async () => {
    await api('POST', '/devices', { admin: true, json: { id: 'taken', name: 'A' } });
    const again = await api('POST', '/devices', { admin: true, json: { id: 'taken', name: 'B' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('device_exists');
    expect(again.headers.get('content-type')).toContain('application/problem+json');
    expect((await api('DELETE', '/devices/taken', { admin: true })).status).toBe(204);
    const reuse = await api('POST', '/devices', { admin: true, json: { id: 'taken', name: 'C' } });
    expect(reuse.status).toBe(409);
    expect(reuse.body.code).toBe('device_exists');
  });

  it('creates concurrently without losing or doubling a device', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `bulk-${String(i).padStart(2, '0')}`);
    const answers = await Promise.all(
      ids.map((id) => api('POST', '/devices', { admin: true, json: { id, name: id } })),
    );
    expect(answers.map((a) => a.status)).toEqual(ids.map(() => 201));
    const racing = await Promise.all(
      [1, 2, 3].map(() => api('POST', '/devices', { admin: true, json: { id: 'race', name: 'r' } })),
    );
    expect(racing.map((a) => a.status).sort()).toEqual([201, 409, 409]);
  });

  it('lists devices by id with cursor pagination and a state filter', async () => {
    for (const id of ['page-a', 'page-b', 'page-c', 'page-d', 'page-e'])
      await api('POST', '/devices', { admin: true, json: { id, name: id } });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await api('GET', `/devices?limit=3${query}`, { admin: true });
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.items.map((d: { id: string }) => d.id));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(['page-a', 'page-b', 'page-c', 'page-d', 'page-e']));
    expect(pages).toBe(Math.ceil(seen.length / 3));
    const closed = await api('GET', '/devices?limit=500&state=closed', { admin: true });
    expect(closed.body.items).toHaveLength(seen.length);
    const online = await api('GET', '/devices?state=online', { admin: true });
    expect(online.body).toEqual({ items: [], nextCursor: null });
  });

  it('updates name and metadata, and reads its own write at once', async () => {
    const created = await api('POST', '/devices', {
      admin: true,
      json: { id: 'edit-me', name: 'Old', metadata: { a: 1 } },
    });
    const renamed = await api('PATCH', '/devices/edit-me', { admin: true, json: { name: 'New' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'New', metadata: { a: 1 } });
    expect(renamed.body).not.toHaveProperty('deviceKey');
    expect(renamed.body.updatedAt >= created.body.updatedAt).toBe(true);
    const remeta = await api('PATCH', '/devices/edit-me', { admin: true, json: { metadata: { b: 2 } } });
    expect(remeta.body).toMatchObject({ name: 'New', metadata: { b: 2 } });
    expect((await api('GET', '/devices/edit-me', { admin: true })).body).toMatchObject({
      name: 'New',
      metadata: { b: 2 },
    });
    const untouched = await api('PATCH', '/devices/edit-me', { admin: true, json: {} });
    expect(untouched.body).toMatchObject({ name: 'New', metadata: { b: 2 } });
  });

  it('rotates the key: the new one works, the old one stops at once', async () => {
    const created = await api('POST', '/devices', { admin: true, json: { id: 'rotate-me', name: 'R' } });
    const oldKey = created.body.deviceKey;
    expect((await api('GET', '/devices/rotate-me/session/state', { deviceKey: oldKey })).status).toBe(200);
    const rotated = await api('PATCH', '/devices/rotate-me', { admin: true, json: { rotateKey: true } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.deviceKey).toMatch(/^dk_/);
    expect(rotated.body.deviceKey).not.toBe(oldKey);
    expect((await api('GET', '/devices/rotate-me/session/state', { deviceKey: oldKey })).status).toBe(401);
    expect((await api('GET', '/devices/rotate-me/session/state', { deviceKey: rotated.body.deviceKey })).status).toBe(
      200,
    );
  });

  it('deletes a device, keeps its history, and answers 404 afterwards', async () => {
    const created = await api('POST', '/devices', { admin: true, json: { id: 'gone', name: 'G' } });
    expect((await api('DELETE', '/devices/gone', { admin: true })).status).toBe(204);
    expect((await api('GET', '/devices/gone', { admin: true })).status).toBe(404);
    expect((await api('PATCH', '/devices/gone', { admin: true, json: { name: 'x' } })).status).toBe(404);
    expect((await api('DELETE', '/devices/gone', { admin: true })).status).toBe(404);
    expect((await api('GET', '/devices/gone/session/state', { deviceKey: created.body.deviceKey })).status).toBe(401);
    const history = await gateway.store.readStream(deviceStream('gone'));
    expect(history.map((e) => e.type)).toEqual(['DeviceCreated', 'DeviceDeleted']);
    // The key is stored only as a hash.
    expect(JSON.stringify(history)).not.toContain(created.body.deviceKey);
  });

  it('answers 404 for unknown devices and routes, 405 for a wrong method', async () => {
    const missing = await api('GET', '/devices/nope', { admin: true });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
    const route = await api('GET', '/nowhere', { admin: true });
    expect(route.status).toBe(404);
    expect(route.headers.get('content-type')).toContain('application/problem+json');
    const method = await api('PUT', '/devices', { admin: true });
    expect(method.status).toBe(405);
    expect(method.body.code).toBe('method_not_allowed');
  });

  it('reports health publicly, and the version, uptime and free disk to the admin key only', async () => {
    const open = await api('GET', '/health');
    expect(open.status).toBe(200);
    expect(open.body).toEqual({
      status: 'ok',
      store: { kind: 'sqlite', ok: true },
      disk: { low: false, writeFailing: false },
    });
    const askedFrom = Date.now();
    const health = await api('GET', '/health', { admin: true });
    const askedBy = Date.now();
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'ok',
      version: JSON.parse(readFileSync('package.json', 'utf8')).version,
      store: { kind: 'sqlite', ok: true },
      disk: { freeBytes: expect.any(Number), low: false, writeFailing: false },
    });
    // Whole seconds since the start, as far as the test can tell when that was.
    expect(Number.isInteger(health.body.uptimeSeconds)).toBe(true);
    expect(health.body.uptimeSeconds).toBeGreaterThanOrEqual(Math.round((askedFrom - startedBy) / 1000));
    expect(health.body.uptimeSeconds).toBeLessThanOrEqual(Math.round((askedBy - startedFrom) / 1000));
    // A device key sees what anyone sees; a key the gateway does not know is refused (it counts as a guess).
    const deviceKey = (await api('POST', '/devices', { admin: true, json: { id: 'health-dk', name: 'H' } })).body
      .deviceKey;
    expect((await api('GET', '/health', { deviceKey })).body).toEqual(open.body);
    const guess = await api('GET', '/health', { headers: { 'x-admin-key': 'not-the-admin-key-0123456789' } });
    expect(guess.status).toBe(401);
    expect(guess.body.code).toBe('unauthorized');
  });

  it('publishes OpenAPI 3.1 for every route, from the validating schemas', async () => {
    const doc = await api('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    const operations = Object.entries(
      doc.body.paths as Record<string, Record<string, { operationId: string }>>,
    ).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /devices createDevice',
        'GET /devices listDevices',
        'GET /devices/{deviceId} getDevice',
        'PATCH /devices/{deviceId} updateDevice',
        'DELETE /devices/{deviceId} deleteDevice',
        'GET /devices/{deviceId}/session/state getSessionState',
        'GET /health health',
      ]),
    );
    const create = doc.body.paths['/devices'].post;
    expect(create.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
    expect(create.responses['201'].content['application/json'].schema.properties.deviceKey).toBeDefined();
    expect(create.responses['401']).toBeDefined();
    expect(doc.body.components.securitySchemes.AdminKey).toMatchObject({ type: 'apiKey', name: 'X-Admin-Key' });
  });

  it('serves /docs from local assets only', async () => {
    const page = await api('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const sources = [...String(page.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThan(2);
    for (const source of sources) {
      expect(source.startsWith('/docs/')).toBe(true);
      const asset = await api('GET', source);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('x-content-type-options'), source).toBe('nosniff');
    }
    expect((await api('GET', '/docs/assets/..%2Fpackage.json')).status).toBe(400);
  });

  it('serves /docs with the security headers of the dashboard and a policy Swagger UI works with', async () => {
    const page = await api('GET', '/docs');
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  });
});
