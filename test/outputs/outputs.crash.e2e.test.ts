/**
 * Broker outputs across outages and SIGKILL: 1,000 events flow while both brokers are cut off (a TCP proxy
 * between the gateway and each broker, the shared brokers themselves untouched) for many tries of each output,
 * and the gateway is killed with SIGKILL once. Every event is published at least once, in order per device, a repeat always with the
 * same message id; JetStream drops the repeats itself (Nats-Msg-Id). The URL's credentials never reach the log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { inboxStream } from '../../src/inbox/inbox-events.js';
import { CHILD_GATEWAY_TESTS } from '../support/child-gateway.js';
import { eventually } from '../support/eventually.js';
import { apiClient } from '../support/gateway.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { tempDir } from '../support/temp-dir.js';
import { messageReceived } from '../webhooks/support/events.js';
import { type InjectableGateway, spawnInjectableGateway } from '../webhooks/support/spawn-injectable.js';
import { NATS_PORT, NatsStreamReader, RABBIT_PORT, RabbitQueue, type Received, uniqueName } from './support/brokers.js';

const DEVICES = ['brk-a', 'brk-b', 'brk-c', 'brk-d'];
const PER_DEVICE = 250;
const ENV = { OUTPUT_RETRY_MAX_DELAY: '300ms' };

describe('broker outputs across outages and SIGKILL', CHILD_GATEWAY_TESTS, () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cleanups.length = 0;
  });

  it('publishes every event at least once, in order per device, repeats with the same id', async () => {
    const dataDir = tempDir('dmg-outputs-crash-');
    const rabbitProxy = await TcpProxy.start(RABBIT_PORT);
    const natsProxy = await TcpProxy.start(NATS_PORT);
    cleanups.push(
      () => rabbitProxy.close(),
      () => natsProxy.close(),
    );
    const exchange = uniqueName('dmg-crash');
    const queue = await RabbitQueue.bind(exchange);
    cleanups.push(() => queue.close());
    const stream = uniqueName('dmgcrash');
    const subjects = stream.replace(/-/g, '_');
    const reader = await NatsStreamReader.open(stream);
    cleanups.push(() => reader.close());

    let gateway: InjectableGateway = await spawnInjectableGateway(dataDir, ENV);
    cleanups.push(() => gateway.kill());
    let api = apiClient(gateway.url);
    const amqpOutput = await api('POST', '/outputs', {
      admin: true,
      json: { type: 'amqp', url: `amqp://guest:guest@127.0.0.1:${rabbitProxy.port}`, exchange, events: ['*'] },
    });
    const natsOutput = await api('POST', '/outputs', {
      admin: true,
      json: {
        type: 'nats',
        url: `nats://127.0.0.1:${natsProxy.port}`,
        subject: `${subjects}.{deviceId}.{event}`,
        stream,
        events: ['message.received'],
      },
    });
    expect([amqpOutput.status, natsOutput.status]).toEqual([201, 201]);

    const injected = new Map<string, string[]>(DEVICES.map((id) => [id, []]));
    let next = 1;
    /** `count` more messages per device, 10 to an append, the devices side by side. */
    const inject = async (count: number) => {
      const from = next;
      next += count;
      await Promise.all(
        DEVICES.map(async (deviceId) => {
          for (let n = from; n < from + count; n += 10) {
            const events = Array.from({ length: Math.min(10, from + count - n) }, (_, i) =>
              messageReceived(deviceId, n + i),
            );
            await gateway.append(inboxStream(deviceId), events);
            injected.get(deviceId)!.push(...events.map((event) => event.id!));
          }
        }),
      );
    };
    const lastErrors = async () =>
      (await api('GET', '/outputs', { admin: true })).body.items.map((o: { lastError: string | null }) => o.lastError);

    // Both brokers take the first events.
    await inject(50);
    // Up to 30 s: under the whole suite's load one connect or confirm can use its 10 s timeout and go again.
    await eventually(() => queue.messages.length >= 100, 'the first messages', 30_000);
    // Cut off: the positions hold, both outputs say why.
    rabbitProxy.cut();
    natsProxy.cut();
    await inject(50);
    await eventually(
      async () => (await lastErrors()).every((error: string | null) => error !== null),
      'lastError on both',
    );
    // Killed meanwhile, and started again while the brokers are still away; more events come.
    await gateway.kill();
    gateway = await spawnInjectableGateway(dataDir, ENV);
    api = apiClient(gateway.url);
    await inject(75);
    await eventually(
      async () => (await lastErrors()).every((error: string | null) => error !== null),
      'lastError after the restart',
    );
    // The outage lasts many tries of each output (what a long outage is to the gateway: a retry every
    // OUTPUT_RETRY_MAX_DELAY), not a fixed time.
    const refusedBefore = [rabbitProxy.refused, natsProxy.refused];
    await eventually(
      () => rabbitProxy.refused >= refusedBefore[0] + 10 && natsProxy.refused >= refusedBefore[1] + 10,
      'ten more tries of each output while the brokers are away',
    );
    // Back: everything arrives, while the last events flow.
    rabbitProxy.restore();
    natsProxy.restore();
    await inject(PER_DEVICE - 175);
    const total = DEVICES.length * PER_DEVICE;
    await eventually(
      () => new Set(queue.messages.map((m) => m.body.id)).size === total,
      'every event on RabbitMQ',
      30_000,
    );
    await eventually(async () => (await reader.count()) >= total, 'every event in JetStream', 30_000);
    await eventually(async () => (await lastErrors()).every((error: string | null) => error === null), 'no lastError');

    const nats = await reader.messages();
    // JetStream dropped the repeats (same Nats-Msg-Id); RabbitMQ may hold some, never under another id.
    expect(nats.length).toBe(total);
    for (const messages of [queue.messages, nats]) checkDelivery(messages, injected);
    expect(gateway.output()).not.toContain('guest:guest');
  });
});

function checkDelivery(messages: Received[], injected: Map<string, string[]>): void {
  const idOf = new Map<string, string>();
  for (const message of messages) {
    // A repeat carries the message id of the first publication: its log position.
    expect(idOf.get(message.body.id) ?? message.messageId).toBe(message.messageId);
    idOf.set(message.body.id, message.messageId);
  }
  for (const [deviceId, ids] of injected) {
    const received = messages.filter((m) => m.body.deviceId === deviceId);
    const firsts = [...new Set(received.map((m) => m.body.id))];
    expect(firsts).toEqual(ids);
    // Nothing newer came before anything older: each message follows the first of every older one.
    const positions = firsts.map((id) => Number(idOf.get(id)));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    let newest = -1;
    for (const message of received) {
      const position = Number(message.messageId);
      if (position > newest) {
        expect(firsts.indexOf(message.body.id)).toBe(positions.indexOf(position));
        newest = position;
      }
    }
  }
}
