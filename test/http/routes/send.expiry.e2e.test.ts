/**
 * OUTBOX_MESSAGE_TTL and expiresAt over HTTP: a message queued on a device whose session never comes online
 * does not wait forever: it is `expired` (a final status, its event, a `message.status` webhook).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxStream } from '../../../src/messages/message-events.js';
import { type Api, startTestGateway } from '../../support/gateway.js';
import { eventually } from '../../support/eventually.js';
import { TestClock } from '../../support/test-clock.js';
import { TestReceiver } from '../../webhooks/support/receiver.js';

describe('queued messages expire', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let receiver: TestReceiver;
  let key: string;
  // Running: the webhook of the expiry is due at its event's (system) time; the test moves on past the TTL.
  const clock = new TestClock({ running: true });

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    gateway = await startTestGateway(
      { DEFAULT_ENGINE: 'sandbox', OUTBOX_MESSAGE_TTL: '10m', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      { clock },
    );
    api = gateway.api;
    key = (await api('POST', '/devices', { admin: true, json: { id: 'late', name: 'late' } })).body.deviceKey;
    const hook = await api('PUT', '/devices/late/hooks', {
      deviceKey: key,
      json: { url: receiver.url, events: ['message.status'] },
    });
    expect(hook.status).toBe(200);
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  it('the 202 says the session state and when the message expires; past it, the message is expired, with its event and webhook', async () => {
    const sent = await api('POST', '/devices/late/send/text', {
      deviceKey: key,
      json: { to: '+49 151 12345678', text: 'too late' },
    });
    expect(sent.status).toBe(202);
    expect(sent.body.sessionState).toBe('closed');
    expect(Date.parse(sent.body.expiresAt) - Date.parse(sent.body.createdAt)).toBe(600_000);
    const [item] = (await api('GET', '/devices/late/outbox', { deviceKey: key })).body.items;
    expect(item).toMatchObject({ outboxId: sent.body.outboxId, expiresAt: sent.body.expiresAt });
    // Every field an item carries is in /openapi.json (clients generated from it would not see an undocumented one).
    const spec = (await api('GET', '/openapi.json')).body;
    const documented =
      spec.paths['/devices/{deviceId}/outbox'].get.responses['200'].content['application/json'].schema.properties.items
        .items.properties;
    expect(Object.keys(documented)).toEqual(expect.arrayContaining(Object.keys(item)));

    // Still queued a few seconds before it expires; expired past it.
    await clock.advance(Date.parse(sent.body.expiresAt) - 5_000 - clock.now());
    expect((await api('GET', '/devices/late/outbox', { deviceKey: key })).body.items).toHaveLength(1);
    await clock.advance(6_000);
    await receiver.waitUntil(() => receiver.of('late').some((r) => r.envelope?.data.status === 'expired'));
    const webhook = receiver.of('late').find((r) => r.envelope?.data.status === 'expired')!.envelope;
    expect(webhook).toMatchObject({
      event: 'message.status',
      data: {
        waMessageId: sent.body.waMessageId,
        outboxId: sent.body.outboxId,
        status: 'expired',
        error: { code: 'expired' },
      },
    });
    const events = await gateway.store.readStream(outboxStream('late'));
    expect(
      events.filter((e) => e.type === 'MessageStatusChanged').map((e) => (e.data as { status: string }).status),
    ).toEqual(['expired']);
    expect((await api('GET', '/devices/late/outbox', { deviceKey: key })).body.items).toEqual([]);
    // Expired is final: it cannot be cancelled or revoked.
    const deleted = await api('DELETE', `/devices/late/send/${sent.body.waMessageId}`, { deviceKey: key });
    expect(deleted.status).toBe(409);
  });

  it("a send's own expiresAt wins over the TTL, and must lie ahead", async () => {
    const expiresAt = new Date(clock.now() + 3_600_000).toISOString();
    const sent = await api('POST', '/devices/late/send/text', {
      deviceKey: key,
      json: { to: '4915112345678', text: 'in time', expiresAt },
    });
    expect(sent.body.expiresAt).toBe(expiresAt);
    const past = await api('POST', '/devices/late/send/text', {
      deviceKey: key,
      json: { to: '4915112345678', text: 'x', expiresAt: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(400);
    expect(past.body.errors).toEqual([{ path: '/expiresAt', message: expect.stringContaining('future') }]);
    // A date-time the schema takes but Date cannot read: said so, not "in the past".
    const leap = await api('POST', '/devices/late/send/text', {
      deviceKey: key,
      json: { to: '4915112345678', text: 'x', expiresAt: '2030-12-31T23:59:60Z' },
    });
    expect(leap.status).toBe(400);
    expect(leap.body.errors).toEqual([
      { path: '/expiresAt', message: expect.stringContaining('not a time this gateway can read') },
    ]);
    await eventually(
      async () =>
        (await api('GET', '/devices/late/outbox', { deviceKey: key })).body.items.length === 1 ? true : undefined,
      'only the one in time waits',
    );
  });
});
