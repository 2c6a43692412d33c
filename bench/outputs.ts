/**
 * outputs: a backlog of 50,000 received messages (100 devices) published by one gateway process to a RabbitMQ
 * output and a NATS JetStream output at once (the shared brokers on 127.0.0.1:5672 and :4222). The outputs are
 * made first; the gateway is stopped, the backlog appended to its store, and the gateway started again: each
 * output then publishes the whole backlog. Its rate is measured at the broker, from the first message of the
 * backlog to arrive to the last: RabbitMQ by a consumer in this process, JetStream by the stream's own
 * timestamps of its first and last message.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import amqp from 'amqplib';
import { connect } from 'nats';
import { deterministicEventId } from '../src/eventstore/event-id.js';
import type { NewEvent } from '../src/eventstore/event-store.js';
import { SQLITE_STORE_FILE } from '../src/eventstore/open-event-store.js';
import { SqliteEventStore } from '../src/eventstore/sqlite/sqlite-event-store.js';
import { inboxStream } from '../src/inbox/inbox-events.js';
import type { Metric } from './lib/benchmark.js';
import { type ChildServer, spawnServer } from './lib/child.js';
import { round } from './lib/stats.js';
import { makeTempDir } from './lib/temp.js';

export const name = 'outputs';
export const description =
  'a backlog of 50,000 events published by one gateway to a RabbitMQ and a NATS JetStream output at once: events/s each';

export const DEVICES = 100;
const BACKLOG = Number(process.env.BENCH_OUTPUTS_BACKLOG ?? 50_000);
const APPEND_BATCH = 100;
const TIMEOUT_MS = 300_000;
const RABBIT_URL = 'amqp://guest:guest@127.0.0.1:5672';
const NATS_SERVER = '127.0.0.1:4222';

export async function run(): Promise<Metric[]> {
  const data = makeTempDir('outputs');
  const adminKey = `ak_bench_${randomBytes(16).toString('hex')}`;
  const suffix = randomUUID().slice(0, 8);
  const exchange = `dmg-bench-${suffix}`;
  const stream = `dmgbench-${suffix}`;
  const subjects = `dmgbench_${suffix}`;
  const env = { LOG_LEVEL: 'warn', DATA_DIR: data.path, ADMIN_API_KEY: adminKey };
  const start = () => spawnServer({ name: 'gateway', script: 'src/main.ts', env, healthPath: '/health' });

  // RabbitMQ: a queue bound to the exchange before anything is published; arrival times kept.
  const rabbit = await amqp.connect(RABBIT_URL);
  const channel = await rabbit.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.bindQueue(queue, exchange, '#');
  const arrived = new Set<string>();
  let firstAt = 0;
  let lastAt = 0;
  await channel.consume(
    queue,
    (message) => {
      if (!message) return;
      const id = String(message.properties.messageId);
      if (arrived.size === 0) firstAt = performance.now();
      if (!arrived.has(id)) {
        arrived.add(id);
        lastAt = performance.now();
      }
    },
    { noAck: true },
  );
  const nc = await connect({ servers: NATS_SERVER });
  const jsm = await nc.jetstreamManager();
  let gateway: ChildServer | undefined;
  try {
    gateway = await start();
    const request = async (body: unknown) => {
      const response = await fetch(`${gateway!.url}/outputs`, {
        method: 'POST',
        headers: { 'x-admin-key': adminKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (response.status !== 201)
        throw new Error(`POST /outputs answered ${response.status}: ${await response.text()}`);
    };
    await request({ type: 'amqp', url: RABBIT_URL, exchange, events: ['*'] });
    await request({
      type: 'nats',
      url: `nats://${NATS_SERVER}`,
      subject: `${subjects}.{deviceId}.{event}`,
      stream,
      events: ['*'],
    });
    await gateway.stop();
    gateway = undefined;

    const store = new SqliteEventStore(join(data.path, SQLITE_STORE_FILE));
    try {
      const perDevice = Math.ceil(BACKLOG / DEVICES);
      for (let from = 0; from < perDevice; from += APPEND_BATCH)
        await Promise.all(
          Array.from({ length: DEVICES }, (_, d) => {
            const deviceId = `bench-out-${d}`;
            const events: NewEvent[] = [];
            for (let n = from; n < Math.min(from + APPEND_BATCH, perDevice); n++) events.push(received(deviceId, n));
            return store.append(inboxStream(deviceId), events);
          }),
        );
    } finally {
      await store.close();
    }
    const total = DEVICES * Math.ceil(BACKLOG / DEVICES);
    gateway = await start();
    const deadline = Date.now() + TIMEOUT_MS;
    let natsState: { messages: number; first_ts: string; last_ts: string } | undefined;
    for (;;) {
      const info = await jsm.streams.info(stream).catch(() => undefined);
      if (info && info.state.messages >= total && arrived.size >= total) {
        natsState = info.state;
        break;
      }
      if (Date.now() > deadline)
        throw new Error(
          `backlog not published in time: RabbitMQ ${arrived.size}, JetStream ${info?.state.messages ?? 0} of ${total}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const amqpSeconds = (lastAt - firstAt) / 1000;
    const natsSeconds = (Date.parse(natsState.last_ts) - Date.parse(natsState.first_ts)) / 1000;
    return [
      { metric: 'backlog events', value: total, unit: 'events' },
      {
        metric: 'RabbitMQ output events/s',
        value: round(total / Math.max(amqpSeconds, 0.001), 0),
        unit: 'events/s',
        target: { op: '>=', value: 10_000 },
      },
      {
        metric: 'NATS JetStream output events/s',
        value: round(total / Math.max(natsSeconds, 0.001), 0),
        unit: 'events/s',
        target: { op: '>=', value: 10_000 },
      },
    ];
  } finally {
    await gateway?.stop();
    await channel.deleteExchange(exchange).catch(() => undefined);
    await rabbit.close().catch(() => undefined);
    await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
    data.remove();
  }
}

export function received(deviceId: string, n: number): NewEvent {
  const waMessageId = `BENCH-${deviceId}-${n}`;
  return {
    id: deterministicEventId(`inbound:${deviceId}:${waMessageId}`),
    type: 'MessageReceived',
    data: {
      deviceId,
      from: '4915112345678',
      type: 'text',
      body: `message ${n}`,
      timestamp: 1_700_000_000 + n,
      waMessageId,
    },
  };
}
