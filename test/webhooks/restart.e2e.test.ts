import { afterEach, describe, expect, it } from 'vitest';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { CHILD_GATEWAY_TESTS, freePort } from '../support/child-gateway.js';
import { apiClient } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { messageReceived } from './support/events.js';
import { eventually } from '../support/eventually.js';
import { TestReceiver } from './support/receiver.js';
import { type InjectableGateway, spawnInjectableGateway } from './support/spawn-injectable.js';

const DEVICES = ['crash-a', 'crash-b', 'crash-c', 'crash-d'];
const ENV = {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  // Short and long enough: attempts keep failing while the receiver is down, and none gives up.
  WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 30 }, () => '400ms').join(','),
  WEBHOOK_RETRY_JITTER: '0',
};

describe('webhooks across SIGKILL', CHILD_GATEWAY_TESTS, () => {
  let gateway: InjectableGateway | undefined;
  let receiver: TestReceiver | undefined;
  afterEach(async () => {
    await gateway?.kill();
    await receiver?.close();
  });

  it('delivers every event after the receiver was down and the gateway was killed twice, each with the webhook-id of its first attempt', async () => {
    const dataDir = tempDir('dmg-webhooks-crash-');
    const port = await freePort();
    const receiverUrl = `http://127.0.0.1:${port}/hooks`;
    // Phase 1: the receiver is up but failing, so that it sees the first attempts and their ids.
    receiver = await TestReceiver.start(port);
    receiver.respond = () => ({ status: 503 });

    gateway = await spawnInjectableGateway(dataDir, ENV);
    let api = apiClient(gateway.url);
    const keys = new Map<string, string>();
    for (const id of DEVICES) {
      const created = await api('POST', '/devices', { admin: true, json: { id, name: id } });
      keys.set(id, created.body.deviceKey);
      expect(
        (
          await api('PUT', `/devices/${id}/hooks`, {
            deviceKey: created.body.deviceKey,
            json: { url: receiverUrl, events: ['message.received'] },
          })
        ).status,
      ).toBe(200);
    }
    const injected = new Map<string, string[]>(DEVICES.map((id) => [id, []]));
    const inject = async (target: InjectableGateway, from: number, count: number) => {
      await Promise.all(
        DEVICES.map(async (id) => {
          for (let n = from; n < from + count; n++) {
            const event = messageReceived(id, n);
            await target.append(inboxStream(id), [event]);
            injected.get(id)!.push(event.id!);
          }
        }),
      );
    };
    await inject(gateway, 1, 5);
    // Each device's head has been tried at least once (the others wait behind it, in order).
    await receiver.waitUntil(() => DEVICES.every((id) => receiver!.of(id).length >= 1));
    const firstAttemptIds = new Map(DEVICES.map((id) => [id, receiver!.of(id)[0].headers['webhook-id']]));
    DEVICES.forEach((id) => expect(firstAttemptIds.get(id)).toBe(injected.get(id)![0]));
    // The log already names every pending delivery by the id it will carry.
    const logged = new Map<string, string[]>();
    for (const id of DEVICES) {
      const page = await api('GET', `/devices/${id}/hooks/deliveries?status=pending`, { deviceKey: keys.get(id) });
      logged.set(id, page.body.items.map((d: { id: string }) => d.id).reverse());
    }

    // Phase 2: the receiver goes down and the gateway dies mid-retry.
    await receiver.close();
    receiver = undefined;
    await gateway.kill();

    // Phase 3: back up with the receiver still down; more events happen; attempts fail; killed again.
    gateway = await spawnInjectableGateway(dataDir, ENV);
    api = apiClient(gateway.url);
    await inject(gateway, 6, 3);
    await eventually(async () => {
      const page = await api('GET', `/devices/${DEVICES[0]}/hooks/deliveries?status=pending&limit=500`, {
        deviceKey: keys.get(DEVICES[0]),
      });
      return page.body.items.some((d: { lastError?: string }) => d.lastError === 'unreachable');
    });
    await gateway.kill();

    // Phase 4: receiver up and answering, gateway restarted: everything arrives.
    receiver = await TestReceiver.start(port);
    gateway = await spawnInjectableGateway(dataDir, ENV);
    const total = DEVICES.length * 8;
    await receiver.waitUntil(
      () => new Set(receiver!.requests.map((r) => r.headers['webhook-id'])).size === total,
      30_000,
    );

    for (const id of DEVICES) {
      const requests = receiver.of(id);
      // Every event arrived, in the order it happened, with webhook-id = envelope id = the id of its first attempt.
      const distinct = [...new Set(requests.map((r) => r.headers['webhook-id']))];
      expect(distinct).toEqual(injected.get(id));
      expect(distinct.slice(0, 5)).toEqual(logged.get(id));
      expect(distinct[0]).toBe(firstAttemptIds.get(id));
      for (const request of requests) expect(request.envelope.id).toBe(request.headers['webhook-id']);
      // Retries included, nothing newer came before anything older.
      const order = requests.map((r) => Number(r.envelope.data.waMessageId.split('-').at(-1)));
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    const api3 = apiClient(gateway.url);
    await eventually(async () => {
      for (const id of DEVICES) {
        const page = await api3('GET', `/devices/${id}/hooks/deliveries?status=delivered&limit=500`, {
          deviceKey: keys.get(id),
        });
        if (page.body.items.length !== 8) return false;
      }
      return true;
    });
  });
});
