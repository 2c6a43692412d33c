import { describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually.js';
import { startTestGateway } from '../../support/gateway.js';
import { bringOnline, createSandboxDevice } from '../../support/sessions.js';

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
        items: [
          { id: 'idle', state: 'closed', today: { sent: 0, received: 0, failed: 0 }, outboxDepth: 0 },
          { id: 'shop', name: 'shop', state: 'online', today: { sent: 2, received: 1, failed: 0 }, outboxDepth: 0 },
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
});
