/**
 * WEBHOOK_RETENTION: the log of deliveries that ended (delivered or failed) is pruned every hour of the
 * gateway's clock; pending ones stay whatever their age. The test moves the clock on instead of waiting hours.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { TestClock } from '../support/test-clock.js';
import { appendReceived } from './support/events.js';
import { TestReceiver } from './support/receiver.js';

describe('the deliveries log past WEBHOOK_RETENTION', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let receiver: TestReceiver;
  // Running: a delivery is due at its event's (system) time; the test skips the hours.
  const clock = new TestClock({ running: true });

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    gateway = await startTestGateway(
      { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETENTION: '1m', WEBHOOK_RETRY_SCHEDULE: '1d' },
      { clock },
    );
    api = gateway.api;
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  it('drops what was delivered at the next hourly prune past the retention, and keeps what is pending', async () => {
    const created = await api('POST', '/devices', { admin: true, json: { id: 'old', name: 'old' } });
    const deviceKey = created.body.deviceKey as string;
    const hook = await api('PUT', '/devices/old/hooks', {
      deviceKey,
      json: { url: receiver.url, events: ['message.received'] },
    });
    expect(hook.status).toBe(200);
    // The first is delivered; the second is refused once and waits a day for its retry.
    receiver.respond = (request) => ({ status: request.envelope?.data.body === 'message 2' ? 503 : 200 });
    const { ids } = await appendReceived(gateway.store, 'old', 2);
    const deliveries = async () =>
      (await api('GET', '/devices/old/hooks/deliveries', { deviceKey })).body.items as Array<{
        id: string;
        status: string;
        lastStatus?: number;
      }>;
    // Pending after its 503, not before its first attempt: that one would go at once with the 200 below.
    await eventually(async () => {
      const items = await deliveries();
      return (
        items.length === 2 &&
        items.every((d) =>
          d.id === ids[0] ? d.status === 'delivered' : d.status === 'pending' && d.lastStatus === 503,
        )
      );
    }, 'one delivered, one pending after its 503');

    // The prune falls due an hour after the start; the retry, not before tomorrow.
    receiver.respond = () => ({ status: 200 });
    await clock.advance(59 * 60_000);
    expect((await deliveries()).map((d) => d.id).sort()).toEqual([...ids].sort());
    await clock.advance(60_000);
    await eventually(async () => {
      const items = await deliveries();
      return items.length === 1 && items[0].id === ids[1] && items[0].status === 'pending';
    }, 'the delivered one pruned, the pending one kept');
  });
});
