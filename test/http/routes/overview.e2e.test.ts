import { describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually.js';
import { startTestGateway } from '../../support/gateway.js';
import { bringOnline, createSandboxDevice } from '../../support/sessions.js';
import { TestReceiver } from '../../webhooks/support/receiver.js';

const NO_LAG = { pending: 0, oldestPendingAt: null };

describe('GET /overview', () => {
  it("counts today's sent, received and failed messages and the outbox, in total and per device; admin only", async () => {
    const gateway = await startTestGateway({ OUTBOX_SPACING: '0ms' });
    const { api } = gateway;
    try {
      const shop = await createSandboxDevice(api, 'shop');
      await createSandboxDevice(api, 'idle');
      await bringOnline(api, shop, '4915100000011');
      for (const text of ['one', 'two'])
        expect(
          (await api('POST', '/devices/shop/send/text', { deviceKey: shop.key, json: { to: '4915100000022', text } }))
            .status,
        ).toBe(202);
      const inbound = await api('POST', '/sandbox/devices/shop/inbound', {
        admin: true,
        json: { from: '4915100000033', body: 'hello' },
      });
      expect(inbound.status).toBe(202);

      const overview = await eventually(async () => {
        const answer = await api('GET', '/overview', { admin: true });
        return answer.body.today?.sent === 2 && answer.body.today.received === 1 ? answer : undefined;
      }, 'two sent and one received today');
      expect(overview.status).toBe(200);
      expect(overview.body).toMatchObject({
        devices: { total: 2, byState: { online: 1, closed: 1 } },
        today: { sent: 2, received: 1, failed: 0 },
        outboxDepth: 0,
        webhooks: NO_LAG,
        items: [
          { id: 'idle', state: 'closed', today: { sent: 0, received: 0, failed: 0 }, outboxDepth: 0, webhooks: NO_LAG },
          {
            id: 'shop',
            name: 'shop',
            state: 'online',
            today: { sent: 2, received: 1, failed: 0 },
            outboxDepth: 0,
            webhooks: NO_LAG,
          },
        ],
        nextCursor: null,
      });
      expect(overview.body.day).toBe(new Date(Date.parse(overview.body.generatedAt)).toISOString().slice(0, 10));

      const page = await api('GET', '/overview?limit=1', { admin: true });
      expect(page.body.items.map((item: { id: string }) => item.id)).toEqual(['idle']);
      const next = await api('GET', `/overview?limit=1&cursor=${page.body.nextCursor}`, { admin: true });
      expect(next.body.items.map((item: { id: string }) => item.id)).toEqual(['shop']);

      expect((await api('GET', '/overview', { deviceKey: shop.key })).status).toBe(403);
      expect((await api('GET', '/overview')).status).toBe(401);
      expect((await api('GET', '/overview?limit=0', { admin: true })).status).toBe(400);
      expect((await api('GET', '/overview?cursor=%%%', { admin: true })).status).toBe(400);
    } finally {
      await gateway.close();
    }
  });

  it('shows the webhook lag: the deliveries waiting for a receiver that fails, and since when, until it answers', async () => {
    const receiver = await TestReceiver.start();
    // Retries soon and for long enough (no delivery fails for good while the receiver is down).
    const gateway = await startTestGateway({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: Array(40).fill('250ms').join(','),
    });
    const { api } = gateway;
    try {
      const shop = await createSandboxDevice(api, 'shop');
      await createSandboxDevice(api, 'quiet');
      await bringOnline(api, shop, '4915100000011');
      expect(
        (
          await api('PUT', '/devices/shop/hooks', {
            deviceKey: shop.key,
            json: { url: receiver.url, events: ['message.received'] },
          })
        ).status,
      ).toBe(200);
      let up = false;
      receiver.respond = () => ({ status: up ? 200 : 503 });
      for (const body of ['one', 'two'])
        await api('POST', '/sandbox/devices/shop/inbound', { admin: true, json: { from: '4915100000033', body } });
      await receiver.waitUntil(() => receiver.requests.length >= 1, 15_000, 'the first attempt');

      // The first delivery is retried, the second waits behind it in the lane.
      const lagging = await eventually(async () => {
        const answer = await api('GET', '/overview', { admin: true });
        return answer.body.webhooks?.pending === 2 ? answer.body : undefined;
      }, 'two deliveries waiting');
      const first = receiver.requests[0].envelope;
      expect(lagging.webhooks).toEqual({ pending: 2, oldestPendingAt: first.timestamp });
      expect(lagging.items).toMatchObject([
        { id: 'quiet', webhooks: NO_LAG },
        { id: 'shop', webhooks: { pending: 2, oldestPendingAt: first.timestamp } },
      ]);

      up = true;
      const caughtUp = await eventually(async () => {
        const answer = await api('GET', '/overview', { admin: true });
        return answer.body.webhooks?.pending === 0 ? answer.body : undefined;
      }, 'every delivery made');
      expect(caughtUp.webhooks).toEqual(NO_LAG);
      expect(caughtUp.items[1].webhooks).toEqual(NO_LAG);
      const log = await api('GET', '/devices/shop/hooks/deliveries', { deviceKey: shop.key });
      expect(log.body.items.map((item: { status: string }) => item.status)).toEqual(['delivered', 'delivered']);
    } finally {
      await gateway.close();
      await receiver.close();
    }
  });
});
