/**
 * Every route × every scope, from the route declarations as /openapi.json publishes them (`x-scope`): a key
 * with only the route's scope gets past authentication, a key with only another scope is `403
 * insufficient_scope` naming the route's, any scoped key on an admin route is `403 forbidden`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/auth/scopes.js';
import { startTestGateway } from '../support/gateway.js';
import { createSandboxDevice, type TestDevice } from '../support/sessions.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

interface Operation {
  method: string;
  path: string;
  operationId: string;
  scope: string;
  security: Array<Record<string, string[]>>;
}

/** GETs are `read`, except those that answer a secret. */
const GETS_THAT_NEED_MANAGE = new Set([
  'getHooks',
  'listWebhooks',
  'getWebhook',
  'listGlobalWebhooks',
  'getGlobalWebhook',
]);

describe('route scopes', () => {
  let gateway: TestGateway;
  let device: TestDevice;
  let operations: Operation[];
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' });
    device = await createSandboxDevice(gateway.api, 'scopes');
    for (const scope of SCOPES) {
      const made = await gateway.api('POST', `/devices/${device.id}/keys`, {
        admin: true,
        json: { name: scope, scopes: [scope] },
      });
      keys[scope] = made.body.key;
    }
    const document = (await gateway.api('GET', '/openapi.json')).body;
    operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        scope: operation['x-scope'],
        security: operation.security,
      })),
    );
  });
  afterAll(async () => gateway.close());

  const isPublic = (op: Operation) => op.security.length === 0 || op.security.some((s) => Object.keys(s).length === 0);
  const takesDeviceKey = (op: Operation) => op.security.some((s) => 'DeviceKey' in s);

  it('every route declares a scope by the rule (docs/api-guide.md, "Scoped keys")', () => {
    expect(operations.length).toBeGreaterThan(70);
    for (const op of operations) {
      if (isPublic(op)) expect(op.scope, op.operationId).toBe('none');
      else expect(SCOPES, op.operationId).toContain(op.scope);
      if (op.method === 'GET' && !isPublic(op))
        expect(op.scope, op.operationId).toBe(GETS_THAT_NEED_MANAGE.has(op.operationId) ? 'manage' : 'read');
      if (takesDeviceKey(op)) expect(op.security, op.operationId).toContainEqual({ DeviceKey: [] });
    }
  });

  it('a key passes the routes of its scope and is refused the others', async () => {
    const failures: string[] = [];
    for (const op of operations) {
      if (isPublic(op)) continue;
      const url = `${gateway.url}${op.path.replace('{deviceId}', device.id).replace(/\{[A-Za-z]+\}/g, 'x1')}`;
      for (const scope of SCOPES) {
        const abort = new AbortController();
        const response = await fetch(url, {
          method: op.method,
          headers: { 'x-device-key': keys[scope] },
          signal: abort.signal,
        });
        const body = (response.headers.get('content-type') ?? '').includes('json')
          ? ((await response.json()) as { code?: string; requiredScope?: string })
          : undefined;
        abort.abort(); // a stream that was let through
        const what = `${op.method} ${op.path} with a ${scope} key: ${response.status} ${body?.code ?? ''}`;
        if (!takesDeviceKey(op)) {
          if (response.status !== 403 || body?.code !== 'forbidden')
            failures.push(`${what} (admin route: want 403 forbidden)`);
        } else if (scope === op.scope) {
          if (response.status === 401 || response.status === 403) failures.push(`${what} (want past authentication)`);
        } else if (response.status !== 403 || body?.code !== 'insufficient_scope' || body?.requiredScope !== op.scope)
          failures.push(`${what} (want 403 insufficient_scope requiredScope ${op.scope})`);
      }
    }
    expect(failures).toEqual([]);
  });
});
