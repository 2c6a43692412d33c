/**
 * outputs-fanout: several broker outputs at the head of the log, fed live. A gateway (child process) with one,
 * then with BENCH_OUTPUTS_FANOUT (default 8) RabbitMQ outputs, each to an exchange of its own on the shared broker
 * (127.0.0.1:5672), all caught up; this process then appends BENCH_OUTPUTS_FANOUT_EVENTS received messages
 * (default 20,000, 100 devices, 100 an append) to the gateway's store file while it runs (GATEWAY_CLUSTER: the
 * store follows other writers of its file), as fast as it can. Measured: events/s until the slowest output's last message
 * reached its consumer, and the gateway's CPU seconds per 1,000 events and output; the figure to compare is
 * that CPU with K outputs over the same with one (same run): K outputs at the head share one read of the log.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import amqp from 'amqplib';
import type { NewEvent } from '../src/eventstore/event-store.js';
import { SQLITE_STORE_FILE } from '../src/eventstore/open-event-store.js';
import { SqliteEventStore } from '../src/eventstore/sqlite/sqlite-event-store.js';
import { inboxStream } from '../src/inbox/inbox-events.js';
import type { Metric } from './lib/benchmark.js';
import { type ChildServer, spawnServer } from './lib/child.js';
import { round } from './lib/stats.js';
import { makeTempDir } from './lib/temp.js';
import { DEVICES, received } from './outputs.js';

export const name = 'outputs-fanout';
export const description =
  'live events to 1 and to 8 (BENCH_OUTPUTS_FANOUT) RabbitMQ outputs at the head of the log: events/s to the slowest, gateway CPU per event and output';

const FANOUT = Number(process.env.BENCH_OUTPUTS_FANOUT ?? 8);
const EVENTS = Number(process.env.BENCH_OUTPUTS_FANOUT_EVENTS ?? 20_000);
const APPEND_BATCH = 100;
const TIMEOUT_MS = 300_000;
const RABBIT_URL = 'amqp://guest:guest@127.0.0.1:5672';

export async function run(): Promise<Metric[]> {
  if (!Number.isInteger(FANOUT) || FANOUT < 2) throw new Error('BENCH_OUTPUTS_FANOUT must be a whole number ≥ 2');
  const one = await measure(1);
  const several = await measure(FANOUT);
  return [
    ...one.metrics,
    ...several.metrics,
    {
      metric: `gateway CPU per event and output, ${FANOUT} outputs ÷ 1 output (same run)`,
      value: round(several.cpuPerEventAndOutput / one.cpuPerEventAndOutput, 2),
      unit: '×',
    },
  ];
}

async function measure(outputs: number): Promise<{ metrics: Metric[]; cpuPerEventAndOutput: number }> {
  const data = makeTempDir('outputs-fanout');
  const adminKey = `ak_bench_${randomBytes(16).toString('hex')}`;
  const suffix = randomUUID().slice(0, 8);
  const exchanges = Array.from({ length: outputs }, (_, n) => `dmg-bench-fanout-${suffix}-${n}`);
  // GATEWAY_CLUSTER: the gateway's store follows the other writers of its file (this process's appends).
  const env = { LOG_LEVEL: 'warn', DATA_DIR: data.path, ADMIN_API_KEY: adminKey, GATEWAY_CLUSTER: 'true' };
  const rabbit = await amqp.connect(RABBIT_URL);
  const channel = await rabbit.createChannel();
  // Per exchange: the distinct message ids arrived, and when the last new one did.
  const arrived = exchanges.map(() => ({ ids: new Set<string>(), lastAt: 0 }));
  for (const [n, exchange] of exchanges.entries()) {
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, exchange, '#');
    await channel.consume(
      queue,
      (message) => {
        if (!message) return;
        const id = String(message.properties.messageId);
        if (arrived[n].ids.has(id)) return;
        arrived[n].ids.add(id);
        arrived[n].lastAt = performance.now();
      },
      { noAck: true },
    );
  }
  let gateway: ChildServer | undefined;
  const store = new SqliteEventStore(join(data.path, SQLITE_STORE_FILE), { sharedFile: true });
  try {
    gateway = await spawnServer({ name: 'gateway', script: 'src/main.ts', env, healthPath: '/health' });
    for (const exchange of exchanges) {
      const response = await fetch(`${gateway.url}/outputs`, {
        method: 'POST',
        headers: { 'x-admin-key': adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'amqp', url: RABBIT_URL, exchange, events: ['*'] }),
      });
      if (response.status !== 201)
        throw new Error(`POST /outputs answered ${response.status}: ${await response.text()}`);
    }
    const perDevice = Math.ceil(EVENTS / DEVICES);
    const total = perDevice * DEVICES;
    const cpuBefore = gateway.cpuSeconds() ?? 0;
    const startedAt = performance.now();
    for (let from = 0; from < perDevice; from += APPEND_BATCH)
      for (let d = 0; d < DEVICES; d++) {
        const deviceId = `bench-fanout-${d}`;
        const events: NewEvent[] = [];
        for (let n = from; n < Math.min(from + APPEND_BATCH, perDevice); n++) events.push(received(deviceId, n));
        await store.append(inboxStream(deviceId), events);
      }
    const deadline = Date.now() + TIMEOUT_MS;
    let lastReport = Date.now();
    while (arrived.some((a) => a.ids.size < total)) {
      if (Date.now() - lastReport > 5_000) {
        lastReport = Date.now();
        process.stderr.write(`  ${arrived.map((a) => a.ids.size).join(', ')} of ${total}\n`);
      }
      if (Date.now() > deadline)
        throw new Error(`not published in time: ${arrived.map((a) => a.ids.size).join(', ')} of ${total}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const cpu = (gateway.cpuSeconds() ?? 0) - cpuBefore;
    const seconds = (Math.max(...arrived.map((a) => a.lastAt)) - startedAt) / 1000;
    const cpuPerEventAndOutput = cpu / (total * outputs);
    const label = outputs === 1 ? '1 output' : `${outputs} outputs`;
    return {
      cpuPerEventAndOutput,
      metrics: [
        { metric: `live events/s to the slowest of ${label}`, value: round(total / seconds, 0), unit: 'events/s' },
        {
          metric: `gateway CPU ms per 1,000 events and output, ${label}`,
          value: round(cpuPerEventAndOutput * 1_000_000, 1),
          unit: 'ms',
        },
      ],
    };
  } finally {
    await gateway?.stop();
    await store.close();
    for (const exchange of exchanges) await channel.deleteExchange(exchange).catch(() => undefined);
    await rabbit.close().catch(() => undefined);
    data.remove();
  }
}
