import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceStream } from '../../../src/devices/device-events.js';
import { addressRange } from '../../../src/net/outbound-guard.js';
import { type Api, startTestGateway } from '../../support/gateway.js';
import { appendReceived } from '../../webhooks/support/events.js';
import { TestReceiver } from '../../webhooks/support/receiver.js';
import { eventually } from '../../support/eventually.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('hook configuration routes', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let receiver: TestReceiver;

  beforeAll(async () => {
    // Receivers in tests listen on 127.0.0.1, which the guard refuses unless told otherwise.
    gateway = await startTestGateway({
      DEFAULT_ENGINE: 'sandbox',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: 'none',
    });
    api = gateway.api;
    receiver = await TestReceiver.start();
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  async function createDevice(id: string): Promise<string> {
    const created = await api('POST', '/devices', { admin: true, json: { id, name: id } });
    expect(created.status).toBe(201);
    return created.body.deviceKey;
  }

  it('creates the secret on the first PUT, keeps it, and rotates it on request', async () => {
    const deviceKey = await createDevice('hooks-1');
    expect((await api('GET', '/devices/hooks-1/hooks', { deviceKey })).body.code).toBe('hooks_not_configured');

    const first = await api('PUT', '/devices/hooks-1/hooks', {
      deviceKey,
      json: { url: receiver.url, events: ['message.received'] },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ url: receiver.url, events: ['message.received'] });
    expect(first.body.secret).toMatch(SECRET);
    expect(Buffer.from(first.body.secret.slice(6), 'base64')).toHaveLength(32);
    expect(Date.parse(first.body.updatedAt)).not.toBeNaN();

    const second = await api('PUT', '/devices/hooks-1/hooks', {
      deviceKey,
      json: { url: `${receiver.url}/v2`, events: ['session.state', 'message.status'] },
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({
      url: `${receiver.url}/v2`,
      events: ['session.state', 'message.status'],
      secret: first.body.secret,
    });

    const read = await api('GET', '/devices/hooks-1/hooks', { deviceKey });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(second.body);

    const rotated = await api('PUT', '/devices/hooks-1/hooks', {
      deviceKey,
      json: { url: receiver.url, events: ['message.received'], rotateSecret: true },
    });
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(first.body.secret);
    expect((await api('GET', '/devices/hooks-1/hooks', { admin: true })).body.secret).toBe(rotated.body.secret);

    // The configuration is an event on the device's own stream.
    const stream = await gateway.store.readStream(deviceStream('hooks-1'));
    expect(stream.map((e) => e.type)).toEqual([
      'DeviceCreated',
      'HooksConfigured',
      'HooksConfigured',
      'HooksConfigured',
    ]);
  });

  it('deletes the configuration; a later PUT makes a new secret', async () => {
    const deviceKey = await createDevice('hooks-2');
    const put = await api('PUT', '/devices/hooks-2/hooks', {
      deviceKey,
      json: { url: receiver.url, events: ['message.received'] },
    });
    expect((await api('DELETE', '/devices/hooks-2/hooks', { deviceKey })).status).toBe(204);
    const gone = await api('GET', '/devices/hooks-2/hooks', { deviceKey });
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('hooks_not_configured');
    expect(gone.headers.get('content-type')).toContain('application/problem+json');
    expect((await api('DELETE', '/devices/hooks-2/hooks', { deviceKey })).status).toBe(204);
    const again = await api('PUT', '/devices/hooks-2/hooks', {
      deviceKey,
      json: { url: receiver.url, events: ['message.received'] },
    });
    expect(again.body.secret).not.toBe(put.body.secret);
  });

  it('refuses bad configurations with 400 invalid_request', async () => {
    const deviceKey = await createDevice('hooks-3');
    const bad: unknown[] = [
      { url: 'ftp://example.com/hook', events: ['message.received'] },
      { url: 'not a url', events: ['message.received'] },
      { url: 'https://example.com/hook', events: [] },
      { url: 'https://example.com/hook', events: ['message.received', 'message.received'] },
      { url: 'https://example.com/hook', events: ['message.sent'] },
      { url: 'https://example.com/hook' },
      { events: ['message.received'] },
      { url: 'https://example.com/hook', events: ['message.received'], extra: true },
      { url: `https://example.com/${'a'.repeat(2100)}`, events: ['message.received'] },
    ];
    for (const json of bad) {
      const answer = await api('PUT', '/devices/hooks-3/hooks', { deviceKey, json });
      expect(answer.status, JSON.stringify(json).slice(0, 80)).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(answer.body.errors.length).toBeGreaterThan(0);
    }
    expect((await api('GET', '/devices/hooks-3/hooks', { deviceKey })).status).toBe(404);
  });

  it('lets only the device key or the admin key in', async () => {
    const key1 = await createDevice('hooks-4');
    const key2 = await createDevice('hooks-5');
    const json = { url: receiver.url, events: ['message.received'] };
    expect((await api('PUT', '/devices/hooks-4/hooks', { json })).status).toBe(401);
    expect((await api('PUT', '/devices/hooks-4/hooks', { deviceKey: key2, json })).status).toBe(401);
    expect((await api('GET', '/devices/hooks-4/hooks', { deviceKey: key2 })).status).toBe(401);
    expect((await api('POST', '/devices/hooks-4/hooks/test', { deviceKey: key2 })).status).toBe(401);
    expect((await api('GET', '/devices/hooks-4/hooks/deliveries', { deviceKey: key2 })).status).toBe(401);
    expect((await api('PUT', '/devices/hooks-4/hooks', { deviceKey: key1, json })).status).toBe(200);
    expect((await api('PUT', '/devices/hooks-4/hooks', { admin: true, json })).status).toBe(200);
    const missing = await api('GET', '/devices/no-such-device/hooks', { admin: true });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });

  it('sends a signed test event once and answers with the outcome', async () => {
    const deviceKey = await createDevice('hooks-test');
    expect((await api('POST', '/devices/hooks-test/hooks/test', { deviceKey })).body.code).toBe('hooks_not_configured');
    const put = await api('PUT', '/devices/hooks-test/hooks', {
      deviceKey,
      json: { url: receiver.url, events: ['session.state'] },
    });

    // The receiver holds this one until the test lets it go: the duration answered is the attempt's, not made up
    // (the gateway runs in this process: one performance timeline).
    let release = () => {};
    let heldSince: number | undefined;
    receiver.respond = () => {
      heldSince = performance.now();
      return { status: 200, after: new Promise<void>((resolve) => (release = resolve)) };
    };
    const answering = api('POST', '/devices/hooks-test/hooks/test', { deviceKey });
    const since = await eventually(() => heldSince, 'the test event held at the receiver');
    const heldMs = performance.now() - since;
    release();
    const ok = await answering;
    receiver.respond = () => ({ status: 200 });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ delivered: true, status: 200 });
    // Rounded to a tenth of a millisecond.
    expect(ok.body.durationMs).toBeGreaterThanOrEqual(heldMs - 0.05);
    expect(ok.body.durationMs).toBeLessThan(10_000); // WEBHOOK_TIMEOUT_MS
    const request = receiver.of('hooks-test').at(-1)!;
    expect(request.envelope).toMatchObject({
      event: 'webhook.test',
      deviceId: 'hooks-test',
      data: { message: expect.any(String) },
    });
    expect(request.headers['webhook-id']).toBe(request.envelope.id);
    expect(new Webhook(put.body.secret).verify(request.body, request.headers as Record<string, string>)).toEqual(
      request.envelope,
    );

    receiver.respond = () => ({ status: 503 });
    const failed = await api('POST', '/devices/hooks-test/hooks/test', { deviceKey });
    receiver.respond = () => ({ status: 200 });
    expect(failed.body).toMatchObject({ delivered: false, status: 503, error: 'answered 503' });
    // Once means once: no retry follows, and the test event is not in the deliveries log.
    expect(receiver.of('hooks-test').filter((r) => r.envelope.event === 'webhook.test')).toHaveLength(2);
    expect((await api('GET', '/devices/hooks-test/hooks/deliveries', { deviceKey })).body.items).toEqual([]);

    const closed = await TestReceiver.start();
    const deadUrl = closed.url;
    await closed.close();
    await api('PUT', '/devices/hooks-test/hooks', { deviceKey, json: { url: deadUrl, events: ['session.state'] } });
    const refused = await api('POST', '/devices/hooks-test/hooks/test', { deviceKey });
    // One reason, whatever the cause: "refused" and "host not found" would map the gateway's network.
    expect(refused.body).toMatchObject({ delivered: false, error: 'unreachable' });
    expect(refused.body).not.toHaveProperty('status');
  });

  it('tells the device one reason for a receiver that did not answer, and the admin why (issue 28)', async () => {
    const deviceKey = await createDevice('hooks-unreachable');
    const closed = await TestReceiver.start();
    const refusedUrl = closed.url;
    await closed.close();
    // A name that never resolves (RFC 2606's .invalid) and a port nothing listens on: told apart, they map the network.
    for (const url of ['http://no-such-receiver.invalid/hooks', refusedUrl]) {
      await api('PUT', '/devices/hooks-unreachable/hooks', { deviceKey, json: { url, events: ['message.received'] } });
      const test = await api('POST', '/devices/hooks-unreachable/hooks/test', { deviceKey });
      expect(test.status, url).toBe(200);
      expect(test.body, url).toMatchObject({ delivered: false, error: 'unreachable' });
      expect(test.body, url).not.toHaveProperty('status');
    }

    // A real delivery (no retries here) keeps the cause for the admin; the device sees `unreachable` only.
    await appendReceived(gateway.store, 'hooks-unreachable', 1);
    const failed = await eventually(async () => {
      const page = await api('GET', '/devices/hooks-unreachable/hooks/deliveries', { deviceKey });
      return page.body.items[0]?.status === 'failed' ? page.body.items[0] : undefined;
    }, 'the failed delivery');
    expect(failed).toMatchObject({ attempts: 1, lastError: 'unreachable' });
    expect(failed).not.toHaveProperty('lastErrorDetail');
    const asAdmin = await api('GET', '/devices/hooks-unreachable/hooks/deliveries', { admin: true });
    expect(asAdmin.body.items[0]).toMatchObject({ lastError: 'unreachable', lastErrorDetail: 'connection refused' });
    // An HTTP answer is no probe: it is told as it is.
    await api('PUT', '/devices/hooks-unreachable/hooks', {
      deviceKey,
      json: { url: receiver.url, events: ['message.received'] },
    });
    receiver.respond = () => ({ status: 500 });
    try {
      expect((await api('POST', '/devices/hooks-unreachable/hooks/test', { deviceKey })).body).toMatchObject({
        delivered: false,
        status: 500,
        error: 'answered 500',
      });
    } finally {
      receiver.respond = () => ({ status: 200 });
    }
  });

  it('a deleted device takes its hooks with it, and nothing more is delivered', async () => {
    const deviceKey = await createDevice('hooks-deleted');
    await api('PUT', '/devices/hooks-deleted/hooks', {
      deviceKey,
      json: { url: receiver.url, events: ['message.received'] },
    });
    const before = await appendReceived(gateway.store, 'hooks-deleted', 1);
    await receiver.waitUntil(() => receiver.of('hooks-deleted').length === 1);
    expect(receiver.of('hooks-deleted')[0].envelope.id).toBe(before.ids[0]);

    expect((await api('DELETE', '/devices/hooks-deleted', { admin: true })).status).toBe(204);
    const after = await appendReceived(gateway.store, 'hooks-deleted', 3, 2);
    await gateway.webhooks.waitFor(after.position);
    expect(gateway.webhooks.hooks.view('hooks-deleted')).toBeUndefined();
    expect(gateway.webhooks.deliveries.list('hooks-deleted', { limit: 10 }).items.map((d) => d.id)).toEqual(before.ids);
    expect((await api('GET', '/devices/hooks-deleted/hooks', { admin: true })).status).toBe(404);
    expect((await api('GET', '/devices/hooks-deleted/hooks', { deviceKey })).status).toBe(401);
    expect(
      (
        await api('PUT', '/devices/hooks-deleted/hooks', {
          admin: true,
          json: { url: receiver.url, events: ['message.received'] },
        })
      ).status,
    ).toBe(404);
    expect(receiver.of('hooks-deleted')).toHaveLength(1);
  });

  it('documents every hook route in the OpenAPI document', async () => {
    const doc = (await api('GET', '/openapi.json')).body;
    expect(Object.keys(doc.paths['/devices/{deviceId}/hooks'])).toEqual(
      expect.arrayContaining(['get', 'put', 'delete']),
    );
    expect(doc.paths['/devices/{deviceId}/hooks/test'].post).toBeDefined();
    expect(doc.paths['/devices/{deviceId}/hooks/deliveries'].get).toBeDefined();
    expect(doc.paths['/devices/{deviceId}/hooks/deliveries/{deliveryId}/retry'].post).toBeDefined();
  });
});

describe('hook configuration with the network guard on (the default)', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let receiver: TestReceiver;

  beforeAll(async () => {
    gateway = await startTestGateway();
    receiver = await TestReceiver.start();
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  it('refuses private IP literals when configured, and any address that resolves inside when dialled', async () => {
    const { api } = gateway;
    const deviceKey = (await api('POST', '/devices', { admin: true, json: { id: 'guarded', name: 'g' } })).body
      .deviceKey;
    for (const host of [
      '127.0.0.1',
      '10.0.0.1',
      '169.254.169.254',
      '[::1]',
      '100.64.0.1',
      '[fd00::1]',
      '[::ffff:192.168.0.1]',
      'localhost',
    ]) {
      const answer = await api('PUT', '/devices/guarded/hooks', {
        deviceKey,
        json: { url: `http://${host}:8080/hook`, events: ['message.received'] },
      });
      expect(answer.status, host).toBe(400);
      expect(answer.body.errors[0].path).toBe('/url');
    }
    // A name is judged on the address it resolves to, when the connection is made: this machine's own
    // name resolves to one of its own addresses (loopback or private, never a public one in a test run).
    const name = hostname();
    const resolved = await lookup(name, { all: true }).catch(() => []);
    if (resolved.length > 0 && resolved.every((a) => addressRange(a.address) !== 'unicast')) {
      const viaName = receiver.url.replace('127.0.0.1', name);
      expect(
        (
          await api('PUT', '/devices/guarded/hooks', {
            deviceKey,
            json: { url: viaName, events: ['message.received'] },
          })
        ).status,
      ).toBe(200);
      const test = await api('POST', '/devices/guarded/hooks/test', { deviceKey });
      expect(test.body.delivered).toBe(false);
      expect(test.body.error).toBe('unreachable');
    }
    expect(receiver.requests).toHaveLength(0);
  });
});
