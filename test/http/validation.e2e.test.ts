import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStream } from '../../src/devices/device-events.js';
import { ADMIN_KEY, type Api, startTestGateway } from '../support/gateway.js';

describe('bad input gets a clear 4xx and changes nothing', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;

  beforeAll(async () => {
    gateway = await startTestGateway({ BODY_LIMIT_BYTES: '16384' });
    api = gateway.api;
    await api('POST', '/devices', { admin: true, json: { id: 'existing', name: 'E' } });
  });
  afterAll(() => gateway.close());

  /** Everything in the store, to prove a refused request appended nothing. */
  const storeSize = async () => (await gateway.store.readAll()).length;

  const create = (raw: string, contentType = 'application/json') =>
    api('POST', '/devices', { admin: true, raw, headers: { 'content-type': contentType } });

  it.each([
    ['truncated', '{"name": "x"'],
    ['trailing comma', '{"name": "x",}'],
    ['single quotes', "{'name': 'x'}"],
    ['bare string', '"just a string"'],
    ['bare number', '42'],
    ['garbage', '\u0000\u0001nope'],
  ])('malformed JSON (%s) → 400 malformed_json', async (_, raw) => {
    const before = await storeSize();
    const answer = await create(raw);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('malformed_json');
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(await storeSize()).toBe(before);
  });

  it.each<[string, unknown, string]>([
    ['an array', [{ name: 'x' }], '/'],
    ['null name', { name: null }, '/name'],
    ['missing name', {}, '/'],
    ['empty name', { name: '' }, '/name'],
    ['long name', { name: 'x'.repeat(201) }, '/name'],
    ['number name', { name: 5 }, '/name'],
    ['bad id', { id: '-starts-with-dash', name: 'x' }, '/id'],
    ['id with space', { id: 'a b', name: 'x' }, '/id'],
    ['long id', { id: 'a'.repeat(65), name: 'x' }, '/id'],
    ['unknown engine', { name: 'x', engine: 'telegram' }, '/engine'],
    ['metadata array', { name: 'x', metadata: [1] }, '/metadata'],
    ['metadata string', { name: 'x', metadata: 'x' }, '/metadata'],
    ['unknown property', { name: 'x', colour: 'red' }, '/colour'],
    ['oversized metadata', { name: 'x', metadata: { blob: 'x'.repeat(5000) } }, '/metadata'],
    ['__proto__', JSON.parse('{"name":"x","__proto__":{"admin":true}}'), '/__proto__'],
    ['nested __proto__', JSON.parse('{"name":"x","metadata":{"a":{"__proto__":{"x":1}}}}'), '/metadata/a/__proto__'],
    ['constructor', { name: 'x', metadata: { constructor: { prototype: 1 } } }, '/metadata/constructor'],
    ['prototype in array', { name: 'x', metadata: { list: [{ prototype: 1 }] } }, '/metadata/list/0/prototype'],
  ])('invalid body (%s) → 400 invalid_request at %s', async (_, json, path) => {
    const before = await storeSize();
    const answer = await api('POST', '/devices', { admin: true, json });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
    expect(answer.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(answer.body.detail).toMatch(/^body[/ ]/);
    expect(await storeSize()).toBe(before);
  });

  it('refuses bodies nested too deep, however deep', async () => {
    for (const depth of [40, 5_000, 7_000]) {
      const raw = `{"name":"x","metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      const answer = await create(raw);
      expect(answer.status, `depth ${depth}`).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
    }
  });

  it('refuses an oversized body with 413 before parsing it, with or without Content-Length', async () => {
    const big = JSON.stringify({ name: 'x', metadata: { blob: 'y'.repeat(20_000) } });
    const answer = await create(big);
    expect(answer.status).toBe(413);
    expect(answer.body.code).toBe('payload_too_large');
    const chunked = await new Promise<number>((resolve, reject) => {
      const url = new URL('/devices', gateway.url);
      const req = request(
        url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'x-admin-key': ADMIN_KEY } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 40; i++) req.write('x'.repeat(1_000));
      req.end();
    });
    expect(chunked).toBe(413);
  });

  it('refuses a body that is not JSON with 415', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ]) {
      const answer = await create('name=x', type);
      expect(answer.status, type).toBe(415);
      expect(answer.body.code).toBe('unsupported_media_type');
    }
    const encoded = await api('POST', '/devices', {
      admin: true,
      raw: '{"name":"x"}',
      headers: { 'content-type': 'application/json', 'content-encoding': 'klingon' },
    });
    expect(encoded.status).toBe(415);
  });

  it.each([
    ['limit=0', '/limit'],
    ['limit=501', '/limit'],
    ['limit=abc', '/limit'],
    ['limit=1.5', '/limit'],
    ['limit=1&limit=2', '/limit'],
    ['state=sleeping', '/state'],
    ['cursor=not-a-cursor', '/cursor'],
    ['cursor=', '/cursor'],
  ])('invalid query %s → 400 at %s', async (query, path) => {
    const answer = await api('GET', `/devices?${query}`, { admin: true });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_request');
    expect(answer.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('a PATCH with bad input changes nothing', async () => {
    const before = (await gateway.store.readStream(deviceStream('existing'))).length;
    for (const json of [{ name: '' }, { rotateKey: 'yes' }, { id: 'other' }, { metadata: null }]) {
      const answer = await api('PATCH', '/devices/existing', { admin: true, json });
      expect(answer.status).toBe(400);
    }
    expect((await gateway.store.readStream(deviceStream('existing'))).length).toBe(before);
    expect((await api('GET', '/devices/existing', { admin: true })).body.name).toBe('E');
  });

  it('no input of any shape produces a 5xx', async () => {
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'];
    const paths = [
      '/devices',
      '/devices/existing',
      '/devices/%E0%A4%A',
      '/devices/%00',
      '/devices/..%2F..%2Fetc',
      '/devices/existing/session/state',
      '/devices/' + 'a'.repeat(5_000),
      '/devices?limit=%FF',
      '/devices?cursor=' + 'z'.repeat(600),
      '/health?x[y]=1',
      '/docs/assets/%2e%2e',
      '//devices',
    ];
    const bodies: Array<string | undefined> = [
      undefined,
      '',
      'null',
      '{}',
      '[]',
      '{"name":{"$gt":""}}',
      '{"name":"\uD800"}',
      '{"name":"x","metadata":{"a":1e400}}',
      '{"id":"x","name":"x","engine":null}',
      '{"rotateKey":true,"name":"' + 'n'.repeat(300) + '"}',
      '\uFEFF{"name":"bom"}',
      '{"name":"x"}{"name":"y"}',
    ];
    const contentTypes = [
      'application/json',
      'application/json; charset=utf-8',
      'application/vnd.api+json',
      'text/plain',
      '',
    ];
    let seed = 42;
    const pick = <T>(items: readonly T[]): T =>
      items[(seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % items.length];
    const failures: string[] = [];
    for (let i = 0; i < 300; i++) {
      const method = pick(methods);
      const path = pick(paths);
      const body = method === 'GET' || method === 'HEAD' ? undefined : pick(bodies);
      const contentType = pick(contentTypes);
      const headers: Record<string, string> = { 'x-admin-key': pick([ADMIN_KEY, 'wrong', '']) };
      if (contentType) headers['content-type'] = contentType;
      if (!headers['x-admin-key']) delete headers['x-admin-key'];
      const answer = await api(method, path, { raw: body, headers });
      if (answer.status >= 500)
        failures.push(`${method} ${path} ${contentType} ${body} → ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    expect(failures).toEqual([]);
  });
});
