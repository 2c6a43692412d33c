import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/auth/keys.js';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway } from '../support/gateway.js';
import { createSandboxDevice, type TestDevice } from '../support/sessions.js';
import { TestClock } from '../support/test-clock.js';
import { SseClient } from '../stream/support/sse-client.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

describe('scoped keys', () => {
  let gateway: TestGateway;
  let device: TestDevice;
  let other: TestDevice;
  const clock = new TestClock({ start: Date.parse('2030-01-01T00:00:00Z'), running: true });

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox' }, { clock });
    device = await createSandboxDevice(gateway.api, 'scoped');
    other = await createSandboxDevice(gateway.api, 'scoped-other');
  });
  afterAll(async () => gateway.close());

  const makeKey = async (scopes: string[], deviceKey = device.key, deviceId = device.id) => {
    const made = await gateway.api('POST', `/devices/${deviceId}/keys`, {
      deviceKey,
      json: { name: `${scopes.join('+')} key`, scopes },
    });
    expect(made.status).toBe(201);
    return made.body as { keyId: string; key: string; scopes: string[]; name: string; createdAt: string };
  };
  const say = (deviceId: string, body: string) =>
    gateway.store.append(inboxStream(deviceId), [
      {
        id: randomUUID(),
        type: 'MessageReceived',
        data: {
          deviceId,
          from: '4915122223333',
          type: 'text',
          body,
          timestamp: 1_700_000_000,
          waMessageId: `3EB0${randomUUID().replaceAll('-', '').slice(0, 18).toUpperCase()}`,
        },
      },
    ]);

  it('makes a key with the scopes asked for, shown once; the key is refused a route that needs another scope', async () => {
    const read = await makeKey(['read']);
    expect(read.key).toMatch(/^dk_/);
    expect(read.scopes).toEqual(['read']);
    expect(Date.parse(read.createdAt)).toBeGreaterThanOrEqual(Date.parse('2030-01-01T00:00:00Z'));

    expect((await gateway.api('GET', `/devices/${device.id}/session/state`, { deviceKey: read.key })).status).toBe(200);
    const refused = await gateway.api('POST', `/devices/${device.id}/send/text`, {
      deviceKey: read.key,
      json: { to: '4915122223333', text: 'hi' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'insufficient_scope', requiredScope: 'send' });
    // Refused before anything was recorded: the outbox is empty.
    const outbox = await gateway.api('GET', `/devices/${device.id}/outbox`, { deviceKey: read.key });
    expect(outbox.body.items).toEqual([]);

    const send = await makeKey(['send', 'read']);
    expect(send.scopes).toEqual(['read', 'send']);
    const sent = await gateway.api('POST', `/devices/${device.id}/send/text`, {
      deviceKey: send.key,
      json: { to: '4915122223333', text: 'hi' },
    });
    expect(sent.status).toBe(202);
    // Making keys needs `manage`.
    const noManage = await gateway.api('POST', `/devices/${device.id}/keys`, {
      deviceKey: send.key,
      json: { name: 'x', scopes: ['manage'] },
    });
    expect(noManage.body).toMatchObject({ status: 403, code: 'insufficient_scope', requiredScope: 'manage' });
    const manage = await makeKey(['manage']);
    expect((await makeKey(['manage'], manage.key)).scopes).toEqual(['manage']);
  });

  it('a scoped key makes no key with a scope it lacks; the admin key and the device key may give any', async () => {
    const manage = await makeKey(['manage']);
    const before = await gateway.api('GET', `/devices/${device.id}/keys`, { deviceKey: device.key });
    const escalated = await gateway.api('POST', `/devices/${device.id}/keys`, {
      deviceKey: manage.key,
      json: { name: 'escalated', scopes: ['manage', 'send'] },
    });
    expect(escalated.status).toBe(403);
    expect(escalated.body).toMatchObject({ code: 'insufficient_scope', requiredScope: 'send' });
    // Refused before anything was recorded.
    const after = await gateway.api('GET', `/devices/${device.id}/keys`, { deviceKey: device.key });
    const ids = (listing: { body: { items: { keyId: string }[] } }) => listing.body.items.map(({ keyId }) => keyId);
    expect(ids(after)).toEqual(ids(before));

    expect((await makeKey(['read', 'send', 'manage'])).scopes).toEqual(['read', 'send', 'manage']);
    const byAdmin = await gateway.api('POST', `/devices/${device.id}/keys`, {
      admin: true,
      json: { name: 'by admin', scopes: ['send'] },
    });
    expect(byAdmin.status).toBe(201);
  });

  it('lists keys without secrets, with when each was last used', async () => {
    const key = await makeKey(['read'], other.key, other.id);
    let listed = await gateway.api('GET', `/devices/${other.id}/keys`, { deviceKey: other.key });
    expect(listed.status).toBe(200);
    const entry = () => listed.body.items.find((item: { keyId: string }) => item.keyId === key.keyId);
    expect(entry()).toEqual({
      keyId: key.keyId,
      name: key.name,
      scopes: ['read'],
      createdAt: key.createdAt,
      lastUsedAt: null,
    });
    expect(JSON.stringify(listed.body)).not.toContain(key.key);
    // Kept hashed: the log holds its SHA-256, never the key; nor does any file of the data directory.
    const log = JSON.stringify(await gateway.store.readAll());
    expect(log).toContain(hashKey(key.key));
    expect(log).not.toContain(key.key);
    for (const file of readdirSync(gateway.dataDir).map((name) => join(gateway.dataDir, name)))
      if (statSync(file).isFile()) expect(readFileSync(file).includes(key.key), file).toBe(false);

    const before = clock.now();
    await gateway.api('GET', `/devices/${other.id}/session/state`, { deviceKey: key.key });
    listed = await gateway.api('GET', `/devices/${other.id}/keys`, { deviceKey: other.key });
    const used = Date.parse(entry().lastUsedAt);
    expect(used).toBeGreaterThanOrEqual(before);
    expect(used).toBeLessThanOrEqual(clock.now());
  });

  it("is a key of its own device only: another device's routes are 401, admin routes 403", async () => {
    const key = await makeKey(['read', 'send', 'manage']);
    expect((await gateway.api('GET', `/devices/${other.id}/session/state`, { deviceKey: key.key })).status).toBe(401);
    const made = await gateway.api('POST', `/devices/${other.id}/keys`, {
      deviceKey: key.key,
      json: { name: 'x', scopes: ['read'] },
    });
    expect(made.status).toBe(401);
    const admin = await gateway.api('GET', '/devices', { deviceKey: key.key });
    expect(admin.body).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('refuses bad input with 400 and makes nothing', async () => {
    const before = (await gateway.api('GET', `/devices/${device.id}/keys`, { admin: true })).body.items.length;
    for (const json of [
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['admin'] },
      { name: '', scopes: ['read'] },
      { scopes: ['read'] },
      { name: 'x', scopes: ['read'], key: 'dk_mine' },
    ]) {
      const answer = await gateway.api('POST', `/devices/${device.id}/keys`, { admin: true, json });
      expect(answer.status, JSON.stringify(json)).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
    }
    expect((await gateway.api('GET', `/devices/${device.id}/keys`, { admin: true })).body.items.length).toBe(before);
    expect((await gateway.api('DELETE', `/devices/${device.id}/keys/primary`, { admin: true })).status).toBe(404);
  });

  it('a deleted key stops at once, and the streams opened with it end; the device key and other keys go on', async () => {
    const doomed = await makeKey(['read']);
    const kept = await makeKey(['read']);
    const withDoomed = await SseClient.open(`${gateway.url}/devices/${device.id}/stream`, {
      'x-device-key': doomed.key,
    });
    const withKept = await SseClient.open(`${gateway.url}/devices/${device.id}/stream`, { 'x-device-key': kept.key });
    const withDevice = await SseClient.open(`${gateway.url}/devices/${device.id}/stream`, {
      'x-device-key': device.key,
    });
    try {
      expect([withDoomed.status, withKept.status, withDevice.status]).toEqual([200, 200, 200]);
      await say(device.id, 'before');
      await withDoomed.waitForCount(1);

      const deleted = await gateway.api('DELETE', `/devices/${device.id}/keys/${doomed.keyId}`, {
        deviceKey: device.key,
      });
      expect(deleted.status).toBe(204);
      // At once: the very next request with it.
      expect((await gateway.api('GET', `/devices/${device.id}/session/state`, { deviceKey: doomed.key })).status).toBe(
        401,
      );
      await eventually(() => withDoomed.ended, 'the stream of the deleted key to end');
      await say(device.id, 'after');
      await withKept.waitForCount(2);
      await withDevice.waitForCount(2);
      expect(withDoomed.events.map((e) => e.envelope.data.body)).toEqual(['before']);
      expect(withKept.ended || withDevice.ended).toBe(false);
      const listed = await gateway.api('GET', `/devices/${device.id}/keys`, { admin: true });
      expect(listed.body.items.map((item: { keyId: string }) => item.keyId)).not.toContain(doomed.keyId);
      expect((await gateway.api('DELETE', `/devices/${device.id}/keys/${doomed.keyId}`, { admin: true })).status).toBe(
        404,
      );

      // Rotating the device key ends the streams of that key only, not those of scoped keys.
      const rotated = await gateway.api('PATCH', `/devices/${device.id}`, { admin: true, json: { rotateKey: true } });
      device = { ...device, key: rotated.body.deviceKey };
      await eventually(() => withDevice.ended, 'the stream of the rotated-out device key to end');
      await say(device.id, 'after the rotation');
      await withKept.waitForCount(3);
      expect(withKept.ended).toBe(false);
    } finally {
      await Promise.all([withDoomed.close(), withKept.close(), withDevice.close()]);
    }
  });

  it("a device's keys go with it", async () => {
    const gone = await createSandboxDevice(gateway.api, 'scoped-gone');
    const key = await makeKey(['read'], gone.key, gone.id);
    const stream = await SseClient.open(`${gateway.url}/devices/${gone.id}/stream`, { 'x-device-key': key.key });
    expect(stream.status).toBe(200);
    expect((await gateway.api('DELETE', `/devices/${gone.id}`, { admin: true })).status).toBe(204);
    await eventually(() => stream.ended, 'the stream of a deleted device to end');
    expect((await gateway.api('GET', '/devices', { deviceKey: key.key })).status).toBe(401);
    await stream.close();
  });
});
