/**
 * Several webhooks per device and global webhooks (issue 34): each webhook and device is its own lane, so a dead
 * receiver delays no other; a global webhook gets every device's events, in each device's order; the limits and
 * bad input are clear 4xx answers that change nothing. Real receivers on 127.0.0.1; retries come from the injected
 * clock, never from waiting.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { type Api, startTestGateway } from '../support/gateway.js';
import { TestClock } from '../support/test-clock.js';
import { appendReceived } from './support/events.js';
import { TestReceiver } from './support/receiver.js';

const HOUR_MS = 3_600_000;

describe('several webhooks per device, and global webhooks', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let api: Api;
  let good: TestReceiver;
  let dead: TestReceiver;
  const keys = new Map<string, string>();
  // Running: deliveries are due as they come; a retry an hour later only comes when the test moves the clock on.
  const clock = new TestClock({ running: true });

  beforeAll(async () => {
    gateway = await startTestGateway(
      {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_SCHEDULE: `${HOUR_MS}ms,${HOUR_MS}ms,${HOUR_MS}ms`,
        WEBHOOK_RETRY_JITTER: '0',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
      { clock },
    );
    api = gateway.api;
    good = await TestReceiver.start();
    dead = await TestReceiver.start();
    dead.respond = () => ({ status: 500 });
  });
  afterAll(async () => {
    await gateway.close();
    await good.close();
    await dead.close();
  });

  async function device(id: string): Promise<string> {
    const created = await api('POST', '/devices', { admin: true, json: { id, name: id } });
    expect(created.status).toBe(201);
    keys.set(id, created.body.deviceKey);
    return created.body.deviceKey;
  }

  const webhookOf = async (id: string, url: string, events: string[] = ['message.received']) => {
    const created = await api('POST', `/devices/${id}/webhooks`, { deviceKey: keys.get(id), json: { url, events } });
    expect(created.status).toBe(201);
    return created.body as { webhookId: string; secret: string; url: string };
  };
  const bodies = (requests: { envelope: { data: { body: string } } }[]) => requests.map((r) => r.envelope.data.body);
  const expected = (from: number, count: number) => Array.from({ length: count }, (_, i) => `message ${from + i}`);

  it('delivers every event to a live receiver on time while another receiver of the device is down, and the dead one catches up by a retry', async () => {
    const key = await device('two');
    const live = await webhookOf('two', `${good.url}?live`);
    const down = await webhookOf('two', `${dead.url}?down`);
    expect(live.webhookId).toMatch(/^wh_/);
    expect(down.webhookId).not.toBe(live.webhookId);

    await appendReceived(gateway.store, 'two', 20);
    // The live receiver gets all 20, in order, while the dead one's first delivery waits an hour for its retry.
    await good.waitUntil(() => good.of('two').length >= 20);
    expect(bodies(good.of('two'))).toEqual(expected(1, 20));
    for (const request of good.of('two'))
      expect(new Webhook(live.secret).verify(request.body, request.headers as Record<string, string>)).toEqual(
        request.envelope,
      );
    expect(dead.of('two')).toHaveLength(1);
    expect(dead.of('two')[0].envelope.data.body).toBe('message 1');
    // Both got the same event id: receivers deduplicate on it.
    expect(dead.of('two')[0].envelope.id).toBe(good.of('two')[0].envelope.id);

    // The dead one's log: its head waits for the retry, the rest wait behind it, in the device's order.
    const deadLog = () => api('GET', `/devices/two/webhooks/${down.webhookId}/deliveries?limit=50`, { deviceKey: key });
    const log = await eventually(async () => {
      const answer = await deadLog();
      return answer.body.items.at(-1)?.attempts === 1 && answer;
    }, 'the failed attempt in the log');
    expect(log.status).toBe(200);
    expect(log.body.items).toHaveLength(20);
    const head = log.body.items.at(-1);
    expect(head).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 500, event: 'message.received' });
    expect(Date.parse(head.nextAttemptAt) - clock.now()).toBeGreaterThan(HOUR_MS - 60_000);
    expect(log.body.items.slice(0, -1).every((d: { attempts: number }) => d.attempts === 0)).toBe(true);
    await eventually(
      async () =>
        (
          await api('GET', `/devices/two/webhooks/${live.webhookId}/deliveries?status=delivered&limit=50`, {
            deviceKey: key,
          })
        ).body.items.length === 20,
      'the live webhook log: 20 delivered',
    );
    // The hook (`default`) has no deliveries: the device has none.
    expect((await api('GET', '/devices/two/hooks/deliveries', { deviceKey: key })).body.items).toEqual([]);

    // The receiver is back; a retry of the head delivers it and the lane goes on with the rest, in order.
    dead.respond = () => ({ status: 200 });
    const retried = await api('POST', `/devices/two/webhooks/${down.webhookId}/deliveries/${head.id}/retry`, {
      deviceKey: key,
    });
    expect(retried.status).toBe(202);
    await dead.waitUntil(() => dead.of('two').length >= 21);
    expect(bodies(dead.of('two'))).toEqual(['message 1', ...expected(1, 20)]);
    await eventually(
      async () => (await deadLog()).body.items.every((d: { status: string }) => d.status === 'delivered'),
      'the retried webhook log: every record delivered',
    );
    expect(good.of('two')).toHaveLength(20); // the live lane sent nothing twice
    dead.respond = () => ({ status: 500 });
  });

  it('retries a failed delivery on its own schedule, from the injected clock', async () => {
    const key = await device('sched');
    const down = await webhookOf('sched', `${dead.url}?sched`);
    await appendReceived(gateway.store, 'sched', 1);
    await dead.waitUntil(() => dead.of('sched').length >= 1);
    dead.respond = () => ({ status: 200 });
    // The lane waits for its retry on the clock: an hour from the failed attempt.
    await eventually(() => clock.pending().some((due) => due - clock.now() > HOUR_MS - 60_000), 'the retry timer');
    await clock.advance(HOUR_MS);
    await dead.waitUntil(() => dead.of('sched').length >= 2);
    expect(dead.of('sched')[1].attemptOfId).toBe(2);
    await eventually(async () => {
      const log = await api('GET', `/devices/sched/webhooks/${down.webhookId}/deliveries`, { deviceKey: key });
      return log.body.items[0]?.status === 'delivered' && log.body.items[0].attempts === 2;
    }, 'the retry delivered, on the second attempt');
    dead.respond = () => ({ status: 500 });
  });

  it('sends a global webhook the events of every device, in each device order, and only those of its devices when it lists them', async () => {
    const all = await api('POST', '/webhooks', {
      admin: true,
      json: { url: `${good.url}?global`, events: ['message.received'], description: 'everything' },
    });
    expect(all.status).toBe(201);
    expect(all.body).toMatchObject({ webhookId: expect.stringMatching(/^gwh_/), description: 'everything' });
    const onlyA = await api('POST', '/webhooks', {
      admin: true,
      json: { url: `${good.url}?only-a`, events: ['*'], devices: ['glob-a'] },
    });
    expect(onlyA.status).toBe(201);
    await device('glob-a');
    await device('glob-b');
    // Appended concurrently, interleaved between the devices.
    await Promise.all([appendReceived(gateway.store, 'glob-a', 15), appendReceived(gateway.store, 'glob-b', 15)]);
    const global = (deviceId: string) => good.of(deviceId).filter((r) => r.url.endsWith('?global'));
    const onlyOfA = () => good.requests.filter((r) => r.url.endsWith('?only-a'));
    await good.waitUntil(
      () => global('glob-a').length >= 15 && global('glob-b').length >= 15 && onlyOfA().length >= 15,
    );
    expect(bodies(global('glob-a'))).toEqual(expected(1, 15));
    expect(bodies(global('glob-b'))).toEqual(expected(1, 15));
    expect(onlyOfA().every((r) => r.envelope.deviceId === 'glob-a')).toBe(true);
    expect(bodies(onlyOfA())).toEqual(expected(1, 15));
    for (const request of global('glob-b'))
      expect(new Webhook(all.body.secret).verify(request.body, request.headers as Record<string, string>)).toEqual(
        request.envelope,
      );

    // Its log names each record's device; the admin lists and reads it.
    const log = await eventually(async () => {
      const answer = await api('GET', `/webhooks/${all.body.webhookId}/deliveries?limit=100`, { admin: true });
      return answer.body.items.every((d: { status: string }) => d.status === 'delivered') && answer;
    }, 'the global log: every record delivered');
    expect(log.status).toBe(200);
    expect(log.body.items).toHaveLength(30);
    for (const id of ['glob-a', 'glob-b'])
      expect(
        log.body.items.filter(
          (d: { deviceId: string; status: string }) => d.deviceId === id && d.status === 'delivered',
        ),
      ).toHaveLength(15);
    const listed = await api('GET', '/webhooks', { admin: true });
    expect(listed.body.items.map((w: { webhookId: string }) => w.webhookId)).toEqual([
      all.body.webhookId,
      onlyA.body.webhookId,
    ]);
    // A device key reaches no global webhook.
    expect((await api('GET', '/webhooks', { deviceKey: keys.get('glob-a') })).status).toBe(403);

    // Retry of one record goes again, to the global webhook, for that device only.
    const record = log.body.items.find((d: { deviceId: string }) => d.deviceId === 'glob-a');
    const before = global('glob-a').length;
    const retried = await api('POST', `/webhooks/${all.body.webhookId}/deliveries/${record.id}/retry`, { admin: true });
    expect(retried.status).toBe(202);
    expect(retried.body.deviceId).toBe('glob-a');
    await good.waitUntil(() => global('glob-a').length > before);

    // Deleted: nothing more goes to them.
    for (const id of [all.body.webhookId, onlyA.body.webhookId])
      expect((await api('DELETE', `/webhooks/${id}`, { admin: true })).status).toBe(204);
    expect((await api('GET', `/webhooks/${all.body.webhookId}`, { admin: true })).status).toBe(404);
    expect((await api('GET', '/webhooks', { admin: true })).body.items).toEqual([]);
  });

  it('allows 10 webhooks per device, the hook included, and answers 409 too_many_webhooks for an 11th', async () => {
    const key = await device('full');
    const put = await api('PUT', '/devices/full/hooks', {
      deviceKey: key,
      json: { url: good.url, events: ['message.received'] },
    });
    expect(put.status).toBe(200);
    const listed = await api('GET', '/devices/full/webhooks', { deviceKey: key });
    expect(listed.body.items).toEqual([
      expect.objectContaining({ webhookId: 'default', url: good.url, secret: put.body.secret }),
    ]);
    for (let i = 0; i < 9; i++) await webhookOf('full', `${good.url}?n=${i}`);
    const eleventh = await api('POST', '/devices/full/webhooks', {
      deviceKey: key,
      json: { url: good.url, events: ['message.received'] },
    });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body).toMatchObject({ code: 'too_many_webhooks', status: 409 });
    expect((await api('GET', '/devices/full/webhooks', { deviceKey: key })).body.items).toHaveLength(10);

    // Without the hook, a new hook would be the 11th.
    expect((await api('DELETE', '/devices/full/webhooks/default', { deviceKey: key })).status).toBe(204);
    await webhookOf('full', `${good.url}?tenth`);
    const hook = await api('PUT', '/devices/full/hooks', {
      deviceKey: key,
      json: { url: good.url, events: ['message.received'] },
    });
    expect(hook.status).toBe(409);
    expect(hook.body.code).toBe('too_many_webhooks');
  });

  it('answers bad input with 400, unknown webhooks with 404, and changes nothing', async () => {
    const key = await device('bad');
    const mine = await webhookOf('bad', good.url);
    const snapshot = async () => (await api('GET', '/devices/bad/webhooks', { deviceKey: key })).body;
    const before = await snapshot();
    const post = (json: unknown) => api('POST', '/devices/bad/webhooks', { deviceKey: key, json });
    for (const json of [
      {},
      { url: 'not a url', events: ['message.received'] },
      { url: 'ftp://example.com/x', events: ['message.received'] },
      { url: good.url, events: [] },
      { url: good.url, events: ['no.such.kind'] },
      { url: good.url, events: ['message.received', 'message.received'] },
      { url: good.url, events: ['message.received'], extra: 1 },
      { url: good.url, events: ['message.received'], secret: 'nope' },
      { url: good.url, events: ['message.received'], secret: `whsec_${'A'.repeat(33)}` },
      { url: good.url, events: ['message.received'], devices: ['x'] },
      { url: good.url, events: ['message.received'], description: '' },
    ]) {
      const answer = await post(json);
      expect(answer.status, JSON.stringify(json)).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
    }
    expect(
      (
        await api('POST', '/devices/bad/webhooks', {
          deviceKey: key,
          raw: '{',
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(400);
    const patch = (id: string, json: unknown) => api('PATCH', `/devices/bad/webhooks/${id}`, { deviceKey: key, json });
    expect((await patch(mine.webhookId, {})).status).toBe(400);
    expect((await patch(mine.webhookId, { rotateSecret: true, secret: mine.secret })).status).toBe(400);
    expect((await patch(mine.webhookId, { events: [] })).status).toBe(400);
    expect((await patch('wh_nosuchwebhook', { events: ['*'] })).body).toMatchObject({ status: 404, code: 'not_found' });
    expect((await patch('default', { events: ['*'] })).body.code).toBe('hooks_not_configured');
    expect((await patch('bad id!', { events: ['*'] })).status).toBe(400);
    expect(await snapshot()).toEqual(before);

    expect((await api('GET', '/devices/bad/webhooks/wh_nosuchwebhook', { deviceKey: key })).status).toBe(404);
    expect((await api('DELETE', '/devices/bad/webhooks/wh_nosuchwebhook', { deviceKey: key })).status).toBe(404);
    expect((await api('POST', '/devices/bad/webhooks/wh_nosuchwebhook/test', { deviceKey: key })).status).toBe(404);
    expect((await api('GET', '/devices/bad/webhooks/wh_nosuchwebhook/deliveries', { deviceKey: key })).status).toBe(
      404,
    );
    const noDelivery = await api(
      'POST',
      `/devices/bad/webhooks/${mine.webhookId}/deliveries/00000000-0000-4000-8000-000000000000/retry`,
      { deviceKey: key },
    );
    expect(noDelivery.status).toBe(404);
    // Another device's key reaches none of them.
    expect((await api('GET', '/devices/bad/webhooks', { deviceKey: keys.get('two') })).status).toBe(401);
    // Another device's webhook id is not this device's.
    const other = (await api('GET', '/devices/two/webhooks', { deviceKey: keys.get('two') })).body.items[0];
    expect((await api('GET', `/devices/bad/webhooks/${other.webhookId}`, { deviceKey: key })).status).toBe(404);

    // Global webhooks: the same checks, and a device id list of valid ids.
    for (const json of [
      { url: good.url, events: ['message.received'], devices: [] },
      { url: good.url, events: ['message.received'], devices: ['not valid!'] },
      { url: good.url, events: ['message.received'], devices: ['a', 'a'] },
    ])
      expect((await api('POST', '/webhooks', { admin: true, json })).status, JSON.stringify(json)).toBe(400);
    expect((await api('PATCH', '/webhooks/gwh_nosuch', { admin: true, json: { devices: null } })).status).toBe(404);
    expect((await api('GET', '/webhooks', { admin: true })).body.items).toEqual([]);

    // A good change: the secret the client brings, then a description and fewer kinds.
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const changed = await patch(mine.webhookId, { secret, description: 'mine', events: ['session.state'] });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      webhookId: mine.webhookId,
      secret,
      description: 'mine',
      events: ['session.state'],
    });
    const test = await api('POST', `/devices/bad/webhooks/${mine.webhookId}/test`, { deviceKey: key });
    expect(test.body).toMatchObject({ delivered: true, status: 200 });
    const sent = good.requests.at(-1)!;
    expect(new Webhook(secret).verify(sent.body, sent.headers as Record<string, string>)).toMatchObject({
      event: 'webhook.test',
      deviceId: 'bad',
    });
    expect((await patch(mine.webhookId, { description: null })).body.description).toBeUndefined();
  });

  it("a global webhook whose receiver is down delays no device's own webhook", async () => {
    await device('gdead');
    await webhookOf('gdead', `${good.url}?own`);
    const global = await api('POST', '/webhooks', {
      admin: true,
      json: { url: `${dead.url}?global-dead`, events: ['message.received'], devices: ['gdead'] },
    });
    expect(global.status).toBe(201);
    await appendReceived(gateway.store, 'gdead', 10);
    await good.waitUntil(() => good.of('gdead').length >= 10);
    expect(bodies(good.of('gdead'))).toEqual(expected(1, 10));
    // The global webhook's lane of the device waits an hour for the retry of its head; nothing else went there.
    const log = await eventually(async () => {
      const answer = await api('GET', `/webhooks/${global.body.webhookId}/deliveries?limit=50`, { admin: true });
      return answer.body.items.at(-1)?.attempts === 1 && answer;
    }, 'the failed attempt in the global log');
    expect(log.body.items).toHaveLength(10);
    expect(dead.of('gdead')).toHaveLength(1);
    expect((await api('DELETE', `/webhooks/${global.body.webhookId}`, { admin: true })).status).toBe(204);
  });
});
