/**
 * A hook changed while deliveries are pending: a kind dropped from `events` is not sent any more (its
 * pending deliveries end as failed), and a retry is taken only for a kind the hook lists. Found by audit:
 * a receiver that dropped a kind kept getting it for the whole retry schedule. Real gateway, real receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionStateChangedData } from '../../src/sessions/session-events.js';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { appendReceived, appendSessionState } from './support/events.js';
import { TestReceiver } from './support/receiver.js';

describe('a hook changed while deliveries are pending', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let receiver: TestReceiver;
  let key: string;
  const online: SessionStateChangedData = {
    deviceId: 'narrow',
    state: 'online',
    previousState: 'connecting',
    phone: '4915100000001',
    reason: 'scanned',
  };
  const configure = (events: string[]) =>
    api('PUT', '/devices/narrow/hooks', { deviceKey: key, json: { url: receiver.url, events } });
  const deliveries = async () =>
    (await api('GET', '/devices/narrow/hooks/deliveries?limit=500', { deviceKey: key })).body.items as Array<{
      id: string;
      event: string;
      status: string;
      lastError?: string;
    }>;

  beforeAll(async () => {
    receiver = await TestReceiver.start();
    gateway = await startTestGateway({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms',
      WEBHOOK_RETRY_JITTER: '0',
    });
    api = gateway.api;
    key = (await api('POST', '/devices', { admin: true, json: { id: 'narrow', name: 'narrow' } })).body.deviceKey;
  });
  afterAll(async () => {
    await gateway.close();
    await receiver.close();
  });

  it('ends the pending deliveries of a dropped kind, sends the kinds still listed, and takes no retry of a dropped one', async () => {
    let accept = false;
    receiver.respond = () => ({ status: accept ? 200 : 500 });
    expect((await configure(['message.received', 'session.state'])).status).toBe(200);
    const {
      ids: [message],
    } = await appendReceived(gateway.store, 'narrow', 1);
    await receiver.waitUntil(() => receiver.requests.length >= 1);

    expect((await configure(['session.state'])).status).toBe(200);
    accept = true;
    const seen = receiver.requests.length;
    await appendSessionState(gateway.store, online);
    await receiver.waitUntil(() => receiver.requests.some((r) => r.envelope.event === 'session.state'));
    expect(receiver.requests.slice(seen).map((r) => r.envelope.event)).not.toContain('message.received');
    expect((await deliveries()).find((d) => d.id === message)).toMatchObject({
      status: 'failed',
      lastError: expect.stringContaining('dropped'),
    });

    const retry = await api('POST', `/devices/narrow/hooks/deliveries/${message}/retry`, { deviceKey: key });
    expect(retry.status).toBe(404);
    expect(retry.body).toMatchObject({ code: 'hooks_not_configured', reason: 'kind_not_listed' });

    // Listed again, the kind is retried on request.
    expect((await configure(['*'])).status).toBe(200);
    expect((await api('POST', `/devices/narrow/hooks/deliveries/${message}/retry`, { deviceKey: key })).status).toBe(
      202,
    );
    await eventually(
      async () => (await deliveries()).find((d) => d.id === message)?.status === 'delivered',
      'the retried delivery',
    );
  });
});
