/**
 * Broker outputs end to end on the real brokers (RabbitMQ on 5672, NATS JetStream on 4222): what is published
 * (body, routing key or subject, the log position as message id), the filters, the answers (credentials as
 * `***`, position, lag, lastError), the URL sealed at rest, the lag in /metrics.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { outputStream } from '../../src/outputs/output-events.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway } from '../support/gateway.js';
import { appendSessionState, messageReceived } from '../webhooks/support/events.js';
import { NATS_URL, NatsStreamReader, RABBIT_URL, RabbitQueue, type Received, uniqueName } from './support/brokers.js';

type TestGateway = Awaited<ReturnType<typeof startTestGateway>>;

describe('broker outputs', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cleanups.length = 0;
  });

  async function gateway(env: Record<string, string> = {}): Promise<TestGateway> {
    const started = await startTestGateway(env);
    cleanups.push(() => started.close());
    return started;
  }

  /** Appends n messages received by each device, one append each, in turn; answers their ids per device. */
  async function receive(target: TestGateway, devices: string[], n: number, from = 1): Promise<Map<string, string[]>> {
    const ids = new Map<string, string[]>(devices.map((id) => [id, []]));
    for (let i = from; i < from + n; i++)
      for (const deviceId of devices) {
        const event = messageReceived(deviceId, i);
        await target.store.append(inboxStream(deviceId), [event]);
        ids.get(deviceId)!.push(event.id!);
      }
    return ids;
  }

  const of = (messages: Received[], deviceId: string) => messages.filter((m) => m.body.deviceId === deviceId);

  it('publishes what the filters select to a RabbitMQ topic exchange, the log position as messageId, in order', async () => {
    const target = await gateway({ ENCRYPTION_KEY: randomBytes(32).toString('base64') });
    const exchange = uniqueName('dmg-test');
    const queue = await RabbitQueue.bind(exchange);
    cleanups.push(() => queue.close());
    const made = await target.api('POST', '/outputs', {
      admin: true,
      json: { type: 'amqp', url: RABBIT_URL, exchange, events: ['message.received'], devices: ['out-a', 'out-b'] },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      type: 'amqp',
      url: 'amqp://***:***@127.0.0.1:5672',
      exchange,
      routingKey: '{deviceId}.{event}',
      events: ['message.received'],
      devices: ['out-a', 'out-b'],
      lastError: null,
    });
    expect(JSON.stringify(made.body)).not.toContain('guest');
    const outputId = made.body.outputId as string;

    const ids = await receive(target, ['out-a', 'out-b', 'out-c'], 10);
    await appendSessionState(target.store, {
      deviceId: 'out-a',
      state: 'online',
      at: new Date().toISOString(),
    } as never);
    await eventually(() => queue.messages.length >= 20, 'the messages');
    for (const deviceId of ['out-a', 'out-b']) {
      const received = of(queue.messages, deviceId);
      expect(received.map((m) => m.body.id)).toEqual(ids.get(deviceId));
      expect(received.every((m) => m.key === `${deviceId}.message.received`)).toBe(true);
      const positions = received.map((m) => Number(m.messageId));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    }
    expect(of(queue.messages, 'out-c')).toEqual([]);
    // The message id is the event's log position.
    const [first] = await target.store.readStream(inboxStream('out-a'), { maxCount: 1 });
    expect(of(queue.messages, 'out-a')[0].messageId).toBe(String(first.position));

    const read = await eventually(async () => {
      const answer = await target.api('GET', `/outputs/${outputId}`, { admin: true });
      return answer.body.lag === 0 && answer.body.position > 0 ? answer : undefined;
    }, 'the output caught up');
    expect(read.body.url).toBe('amqp://***:***@127.0.0.1:5672');
    const listed = await target.api('GET', '/outputs', { admin: true });
    expect(listed.body.items.map((o: { outputId: string }) => o.outputId)).toEqual([outputId]);
    // Its own position records follow in the log: caught up once it has read past them.
    const metrics = await eventually(async () => {
      const answer = await target.api('GET', '/metrics', { admin: true });
      return (answer.body as string).includes(`dmg_output_lag{output="${outputId}"} 0`) ? answer : undefined;
    }, 'lag 0 in /metrics');
    expect(metrics.body).toMatch(new RegExp(`dmg_output_messages_published_total\\{output="${outputId}"\\} 20`));
    // At rest: the URL's credentials are sealed, nowhere in the log in clear.
    await eventually(async () => (await target.store.readStream(outputStream(outputId))).length >= 2);
    const raw = JSON.stringify(await target.store.readStream(outputStream(outputId)));
    expect(raw).not.toContain('guest:guest');
    expect(raw).toContain('sealed:v1:');

    expect((await target.api('DELETE', `/outputs/${outputId}`, { admin: true })).status).toBe(204);
    expect((await target.api('GET', `/outputs/${outputId}`, { admin: true })).status).toBe(404);
    expect((await target.api('DELETE', `/outputs/${outputId}`, { admin: true })).status).toBe(404);
  });

  it('publishes to NATS JetStream with Nats-Msg-Id, making the stream it names', async () => {
    const target = await gateway();
    const stream = uniqueName('dmgtest');
    const prefix = stream.replace(/-/g, '_');
    const reader = await NatsStreamReader.open(stream);
    cleanups.push(() => reader.close());
    const made = await target.api('POST', '/outputs', {
      admin: true,
      json: { type: 'nats', url: NATS_URL, subject: `${prefix}.{deviceId}.{event}`, stream, events: ['*'] },
    });
    expect(made.status).toBe(201);
    const ids = await receive(target, ['nats-a', 'nats-b'], 15);
    await eventually(async () => (await reader.count()) >= 30, 'the stream holds every message');
    const messages = await reader.messages();
    for (const deviceId of ['nats-a', 'nats-b']) {
      const received = of(messages, deviceId);
      expect(received.map((m) => m.body.id)).toEqual(ids.get(deviceId));
      expect(received.every((m) => m.key === `${prefix}.${deviceId}.message.received`)).toBe(true);
      const positions = received.map((m) => Number(m.messageId));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(positions.every((p) => p > 0)).toBe(true);
    }
  });

  it('refuses bad URLs and fields with 400 and records nothing', async () => {
    const target = await gateway();
    const amqp = { type: 'amqp', url: RABBIT_URL, exchange: 'x-ok', events: ['*'] };
    const nats = { type: 'nats', url: NATS_URL, events: ['*'] };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...amqp, url: 'not a url' }, '/url'],
      [{ ...amqp, url: 'http://127.0.0.1:5672' }, '/url'],
      [{ ...amqp, url: NATS_URL }, '/url'],
      [{ ...nats, url: RABBIT_URL }, '/url'],
      [{ ...nats, url: 'nats://127.0.0.1:4222/path' }, '/url'],
      [{ ...amqp, url: 'amqp://***:***@127.0.0.1:5672' }, '/url'],
      [{ ...amqp, url: 'amqp://127.0.0.1:0' }, '/url'],
      [{ ...amqp, exchange: undefined }, '/exchange'],
      [{ ...amqp, exchange: 'amq.topic' }, '/exchange'],
      [{ ...amqp, subject: 'a.b' }, '/subject'],
      [{ ...amqp, routingKey: '{device}.{event}' }, '/routingKey'],
      [{ ...nats, exchange: 'x' }, '/exchange'],
      [{ ...nats, subject: 'dmg.*.{event}' }, '/subject'],
      [{ ...nats, subject: 'dmg..{event}' }, '/subject'],
      [{ ...nats, stream: 'has.dot' }, '/stream'],
      [{ ...nats, events: [] }, '/events'],
      [{ ...nats, events: ['nope'] }, '/events'],
      [{ ...nats, devices: ['bad id!'] }, '/devices'],
      [{ ...nats, type: 'kafka' }, '/type'],
    ];
    for (const [json, field] of bad) {
      const answer = await target.api('POST', '/outputs', { admin: true, json });
      expect(answer.status, JSON.stringify(json)).toBe(400);
      expect(answer.body.code).toBe('invalid_request');
      expect(JSON.stringify(answer.body.errors), JSON.stringify(json)).toContain(field);
    }
    expect((await target.api('GET', '/outputs', { admin: true })).body.items).toEqual([]);
    const made = await target.api('POST', '/outputs', { admin: true, json: nats });
    expect(made.status).toBe(201);
    const id = made.body.outputId as string;
    expect((await target.api('PATCH', `/outputs/${id}`, { admin: true, json: { exchange: 'x' } })).status).toBe(400);
    expect((await target.api('PATCH', `/outputs/${id}`, { admin: true, json: { url: 'ftp://x' } })).status).toBe(400);
    expect((await target.api('GET', '/outputs/not-a-uuid', { admin: true })).status).toBe(400);
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await target.api('PATCH', `/outputs/${missing}`, { admin: true, json: { events: ['*'] } })).status).toBe(
      404,
    );
    expect((await target.api('GET', '/outputs', {})).status).toBe(401);
  });

  it('shows bad credentials as lastError, holds the position, and catches up once the URL is put right', async () => {
    const target = await gateway();
    const exchange = uniqueName('dmg-test');
    const queue = await RabbitQueue.bind(exchange);
    cleanups.push(() => queue.close());
    const wrong = 'amqp://guest:not-the-password@127.0.0.1:5672';
    const made = await target.api('POST', '/outputs', {
      admin: true,
      json: { type: 'amqp', url: wrong, exchange, events: ['*'] },
    });
    expect(made.status).toBe(201);
    const id = made.body.outputId as string;
    const ids = await receive(target, ['cred-a'], 5);
    const failing = await eventually(async () => {
      const answer = await target.api('GET', `/outputs/${id}`, { admin: true });
      return answer.body.lastError ? answer : undefined;
    }, 'lastError');
    expect(failing.body.lastError).toMatch(/ACCESS.REFUSED/);
    expect(failing.body.lastError).not.toContain('not-the-password');
    expect(failing.body.lag).toBeGreaterThan(0);
    expect(queue.messages).toEqual([]);
    // The history of the output's stream holds the error, never the password.
    expect(JSON.stringify((await target.api('GET', '/outputs', { admin: true })).body)).not.toContain(
      'not-the-password',
    );

    // The URL as answers show it keeps the stored one; the right one replaces it and publishing resumes.
    expect((await target.api('PATCH', `/outputs/${id}`, { admin: true, json: { url: failing.body.url } })).status).toBe(
      200,
    );
    const fixed = await target.api('PATCH', `/outputs/${id}`, { admin: true, json: { url: RABBIT_URL } });
    expect(fixed.status).toBe(200);
    await eventually(() => queue.messages.length >= 5, 'the messages held back');
    expect(queue.messages.map((m) => m.body.id)).toEqual(ids.get('cred-a'));
    await eventually(async () => (await target.api('GET', `/outputs/${id}`, { admin: true })).body.lastError === null);
  });
});
