/**
 * The route index (src/http/route-index.ts) must find exactly what @koa/router finds, or leave the
 * request to it: checked on every route of the real gateway with awkward parameter values, and on
 * made-up tables where registration order, case and trailing slashes decide.
 */
import Router from '@koa/router';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteIndex } from '../../src/http/route-index.js';
import { startTestGateway } from '../support/gateway.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const VALUES = ['abc', 'a.b', 'x-1_2~', 'a%2Fb', '%E2%9C%93', '%ZZ', 'join', 'blocked', 'text', 'qr.png', 'A', '%20'];

interface Table {
  router: Router;
  index: RouteIndex<number>;
}

function tableOf(routes: ReadonlyArray<{ method: string; path: string }>): Table {
  const router = new Router();
  const index = new RouteIndex<number>();
  routes.forEach(({ method, path }, i) => {
    router.register(path, [method.toLowerCase()], () => i);
    index.add(method, path, i);
  });
  return { router, index };
}

/** What @koa/router runs for the request: the first route matching path and method, with its decoded parameters. */
function koaChoice(router: Router, method: string, path: string) {
  const layer = router.match(path, method).pathAndMethod.find((l) => l.methods.length > 0);
  if (!layer) return undefined;
  return { path: layer.path, params: layer.params(path, layer.captures(path)) };
}

/** Every answer of the index agrees with @koa/router; returns how many requests the index answered. */
function expectAgreement(table: Table, method: string, path: string): boolean {
  const found = table.index.find(method, path);
  if (!found) return false;
  expect({ path: found.route.path, params: found.params }, `${method} ${path}`).toEqual(
    koaChoice(table.router, method, path),
  );
  return true;
}

function requestsFor(template: string): string[] {
  const params = template.split('/').filter((s) => s.startsWith(':'));
  const paths = new Set<string>();
  for (const value of VALUES) {
    let path = template;
    for (const param of params) path = path.replace(param, value);
    paths.add(path);
    paths.add(`${path}/`);
    paths.add(path.toUpperCase());
    paths.add(path.replace('/', '//'));
  }
  return [...paths];
}

describe('the route index', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let routes: Array<{ method: string; path: string }>;
  beforeAll(async () => {
    gateway = await startTestGateway();
    const doc = (await gateway.api('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths).flatMap(([path, byMethod]) =>
      Object.keys(byMethod).map((method) => ({
        method: method.toUpperCase(),
        path: path.replace(/\{(\w+)\}/g, ':$1'),
      })),
    );
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('finds what @koa/router finds on every gateway route, or leaves the request to it', () => {
    expect(routes.length).toBeGreaterThan(50);
    const table = tableOf(routes);
    let answered = 0;
    let checked = 0;
    for (const { path: template } of routes) {
      for (const path of requestsFor(template)) {
        for (const method of METHODS) {
          checked += 1;
          if (expectAgreement(table, method, path)) answered += 1;
        }
      }
    }
    // The plain requests (one per route and value, but for the undecodable one) are the index's own.
    expect(answered).toBeGreaterThanOrEqual(routes.length * (VALUES.length - 1));
    expect(checked).toBeGreaterThan(answered);
  });

  it('answers every route of the gateway for its plain path', () => {
    const table = tableOf(routes);
    for (const { method, path } of routes) {
      const request = path.replace(/:\w+/g, 'x1');
      expect(table.index.find(method, request)?.route.path, `${method} ${request}`).toBe(
        koaChoice(table.router, method, request)?.path,
      );
    }
  });

  it('keeps registration order: a parameter registered before a literal wins, as in @koa/router', () => {
    const table = tableOf([
      { method: 'GET', path: '/things/:id' },
      { method: 'GET', path: '/things/special' },
      { method: 'POST', path: '/things/special' },
    ]);
    expect(table.index.find('GET', '/things/special')?.route.path).toBe('/things/:id');
    expect(table.index.find('POST', '/things/special')?.route.path).toBe('/things/special');
    for (const path of ['/things/special', '/things/other'])
      for (const method of METHODS) expectAgreement(table, method, path);
  });

  it('leaves HEAD, other cases, trailing slashes, empty or undecodable parameters and unknown paths to @koa/router', () => {
    const table = tableOf([
      { method: 'GET', path: '/devices/:deviceId' },
      { method: 'GET', path: '/devices/:deviceId/session/qr.png' },
    ]);
    expect(table.index.find('GET', '/devices/a')?.params).toEqual({ deviceId: 'a' });
    expect(table.index.find('GET', '/devices/a%2Fb')?.params).toEqual({ deviceId: 'a/b' });
    for (const [method, path] of [
      ['HEAD', '/devices/a'],
      ['GET', '/Devices/a'],
      ['GET', '/devices/a/'],
      ['GET', '/devices/'],
      ['GET', '/devices//session/qr.png'],
      ['GET', '/devices/%ZZ'],
      ['GET', '/devices/a/session/qr.PNG'],
      ['GET', '/nothing/here'],
      ['GET', ''],
    ] as const) {
      expect(table.index.find(method, path), `${method} ${path}`).toBeUndefined();
    }
  });

  it('leaves routes it cannot read to @koa/router, and what follows them in their bucket', () => {
    const table = tableOf([
      { method: 'GET', path: '/files/:name.json' },
      { method: 'GET', path: '/files/:name' },
    ]);
    expect(table.index.find('GET', '/files/a')).toBeUndefined();
    expect(koaChoice(table.router, 'GET', '/files/a')?.path).toBe('/files/:name');
  });
});
