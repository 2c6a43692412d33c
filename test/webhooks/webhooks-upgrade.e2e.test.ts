/**
 * Upgrade: a data directory written before devices had several webhooks (a hook on the device's stream, its
 * attempts on `webhooks-<id>` without a `webhookId`) keeps its hook, as the webhook `default`, and its delivery
 * log; what was pending goes out, a retry of an old record goes out, and a new webhook joins beside it.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/auth/keys.js';
import { deviceStream } from '../../src/devices/device-events.js';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { webhooksStream } from '../../src/webhooks/delivery-events.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway, tempDir } from '../support/gateway.js';
import { openTestStore, storeSettings } from '../support/test-store.js';
import { appendReceived } from './support/events.js';
import { TestReceiver } from './support/receiver.js';

const KEY = 'dk_upgrade_test_key_0123456789abcdef0123';
const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const at = '2026-01-01T00:00:00.000Z';

/** What the code before several webhooks wrote: a device, its hook, three events, and two recorded attempts. */
async function writeOldData(store: EventStore, url: string): Promise<string[]> {
  await store.append(deviceStream('old'), [
    {
      type: 'DeviceCreated',
      data: { deviceId: 'old', name: 'old', engine: 'sandbox', metadata: {}, keyHash: hashKey(KEY), at },
    },
    { type: 'HooksConfigured', data: { deviceId: 'old', url, events: ['message.received'], secret: SECRET, at } },
  ]);
  const { ids } = await appendReceived(store, 'old', 3);
  const attempt = (deliveryId: string, outcome: 'delivered' | 'failed', status: number) => ({
    type: 'WebhookDeliveryAttempted',
    data: { deviceId: 'old', deliveryId, round: 0, attempt: 1, outcome, status, durationMs: 4, attemptedAt: at },
  });
  await store.append(webhooksStream('old'), [attempt(ids[0], 'delivered', 200), attempt(ids[1], 'failed', 410)]);
  return ids;
}

describe('webhooks after an upgrade from one hook per device', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let receiver: TestReceiver;
  let ids: string[];

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    const dataDir = tempDir();
    // The old events go in through the store port, on the store the gateway will use (SQLite, or its own
    // EventStoreDB test server in the esdb project: settings first, so that the server is there to open).
    await storeSettings(dataDir, 'in-process');
    const store = await openTestStore(dataDir);
    ids = await writeOldData(store, receiver.url);
    await store.close();
    gateway = await startTestGateway({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  it('keeps the hook as the webhook `default`, with its log, delivers what was pending, and retries an old record', async () => {
    const { api } = gateway;
    const hook = await api('GET', '/devices/old/hooks', { deviceKey: KEY });
    // (`at` as the upcaster reads an event appended without a schema version: its time in the log.)
    expect(hook.body).toEqual({
      url: receiver.url,
      events: ['message.received'],
      secret: SECRET,
      updatedAt: expect.any(String),
    });
    const { updatedAt } = hook.body;
    const listed = await api('GET', '/devices/old/webhooks', { deviceKey: KEY });
    expect(listed.body.items).toEqual([
      {
        webhookId: 'default',
        url: receiver.url,
        events: ['message.received'],
        secret: SECRET,
        createdAt: updatedAt,
        updatedAt,
      },
    ]);

    // The third event was pending: it goes out now, signed with the old secret.
    await receiver.waitUntil(() => receiver.of('old').length >= 1);
    expect(receiver.of('old').map((r) => r.envelope.id)).toEqual([ids[2]]);
    const sent = receiver.of('old')[0];
    expect(new Webhook(SECRET).verify(sent.body, sent.headers as Record<string, string>)).toEqual(sent.envelope);

    const log = await eventually(async () => {
      const answer = await api('GET', '/devices/old/hooks/deliveries', { deviceKey: KEY });
      return answer.body.items[0]?.status === 'delivered' && answer;
    }, 'the pending delivery recorded');
    expect(
      log.body.items.map((d: { id: string; status: string; attempts: number; lastStatus?: number }) => [
        d.id,
        d.status,
        d.attempts,
        d.lastStatus,
      ]),
    ).toEqual([
      [ids[2], 'delivered', 1, 200],
      [ids[1], 'failed', 1, 410],
      [ids[0], 'delivered', 1, 200],
    ]);
    // The same log under the webhook `default`.
    expect((await api('GET', '/devices/old/webhooks/default/deliveries', { deviceKey: KEY })).body).toEqual(log.body);

    // A retry of the old failed record, through the new route, goes out with its webhook-id.
    const retried = await api('POST', `/devices/old/webhooks/default/deliveries/${ids[1]}/retry`, { deviceKey: KEY });
    expect(retried.status).toBe(202);
    await receiver.waitUntil(() => receiver.of('old').length >= 2);
    expect(receiver.of('old')[1].headers['webhook-id']).toBe(ids[1]);
    await eventually(
      async () =>
        (await api('GET', '/devices/old/hooks/deliveries', { deviceKey: KEY })).body.items[1]?.status === 'delivered',
      'the retried record delivered',
    );

    // A further webhook joins beside the hook: a new event goes to both.
    const added = await api('POST', '/devices/old/webhooks', {
      deviceKey: KEY,
      json: { url: `${receiver.url}?second`, events: ['*'] },
    });
    expect(added.status).toBe(201);
    await appendReceived(gateway.store, 'old', 1, 4);
    await receiver.waitUntil(() => receiver.of('old').filter((r) => r.envelope.data.body === 'message 4').length >= 2);
    expect(
      receiver
        .of('old')
        .filter((r) => r.envelope.data.body === 'message 4')
        .map((r) => r.url)
        .sort(),
    ).toEqual(['/hooks', '/hooks?second']);
  });
});
