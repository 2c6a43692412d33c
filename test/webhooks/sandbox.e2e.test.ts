import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.js';
import { bringOnline, createSandboxDevice, sessionChanges } from '../support/sessions.js';
import { TestReceiver } from './support/receiver.js';

describe('webhooks end to end through the sandbox engine', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let receiver: TestReceiver;

  beforeAll(async () => {
    gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    receiver = await TestReceiver.start();
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  it('sends the session going online and a message arriving, in order, signed', async () => {
    const { api } = gateway;
    const device = await createSandboxDevice(api, 'e2e-hooks');
    const put = await api('PUT', `/devices/${device.id}/hooks`, {
      deviceKey: device.key,
      json: { url: receiver.url, events: ['session.state', 'message.received'] },
    });
    expect(put.status).toBe(200);
    await bringOnline(api, device, '4915100001111');
    const inbound = await api('POST', `/sandbox/devices/${device.id}/inbound`, {
      admin: true,
      json: { from: '4915122223333', body: 'hello hook' },
    });
    expect(inbound.status).toBe(202);

    await receiver.waitUntil(() => receiver.of(device.id).some((r) => r.envelope.event === 'message.received'));
    const requests = receiver.of(device.id);
    const states = (await sessionChanges(gateway.store, device.id)).map((c) => c.state);
    const sessionHooks = requests.filter((r) => r.envelope.event === 'session.state');
    // Every state change so far went out, in order, before the message that came after them.
    expect(sessionHooks.map((r) => r.envelope.data.state)).toEqual(states.slice(0, sessionHooks.length));
    expect(sessionHooks.map((r) => r.envelope.data.state)).toContain('online');
    expect(sessionHooks.find((r) => r.envelope.data.state === 'online')!.envelope.data).toMatchObject({
      phone: '4915100001111',
      previousState: expect.any(String),
    });
    const message = requests.at(-1)!;
    expect(message.envelope).toMatchObject({
      event: 'message.received',
      deviceId: device.id,
      data: { from: '4915122223333', type: 'text', body: 'hello hook' },
    });
    expect(message.envelope.data.waMessageId).toEqual(expect.any(String));
    for (const request of requests) {
      expect(new Webhook(put.body.secret).verify(request.body, request.headers as Record<string, string>)).toEqual(
        request.envelope,
      );
    }
  });
});
