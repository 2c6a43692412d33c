/**
 * send: POST /devices/:id/send/text accepted durably (202: the outbox event committed with
 * synchronous=FULL and the read models caught up) by the gateway in a child process, from 50 concurrent
 * autocannon connections. Afterwards the store is checked: every 202 is an OutboxMessageQueued event.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Metric } from './lib/benchmark.js';
import { spawnGateway } from './lib/child.js';
import { type HttpLoadOptions, loadHttp } from './lib/http-load.js';
import { round } from './lib/stats.js';

export const name = 'send';
export const description =
  'POST /send/text accepted durably (202) on the gateway (child process, sandbox device, session closed), 50 connections, autocannon';

const LOAD = { connections: 50, warmupSeconds: 2, durationSeconds: 10 } satisfies Partial<HttpLoadOptions>;
const DEVICE = 'bench-sender';

export async function run(): Promise<Metric[]> {
  // The session stays closed: this measures accepting, not draining (bench `drain` does that).
  const gateway = await spawnGateway({ env: { DEFAULT_ENGINE: 'sandbox' } });
  try {
    const device = await gateway.adminRequest<{ deviceKey: string }>(
      'POST',
      '/devices',
      { id: DEVICE, name: 'Bench sender' },
      201,
    );
    const body = JSON.stringify({
      to: '4915112345678',
      text: 'Your order 4711 has shipped and will arrive tomorrow between 9:00 and 12:00.',
    });
    const result = await loadHttp({
      ...LOAD,
      url: `${gateway.url}/devices/${DEVICE}/send/text`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-device-key': device.deviceKey },
      body,
      serverCpuSeconds: gateway.cpuSeconds,
    });
    // Every 202 (warm-up included) must be a durable outbox event: count them in the store itself.
    const listed = await gateway.adminRequest<{ items: unknown[] }>('GET', `/devices/${DEVICE}/outbox?limit=1`);
    const stored = countQueued(gateway.dataDir);
    const metrics: Metric[] = [
      {
        metric: 'POST /send/text (202), 50 connections',
        value: round(result.requestsPerSecond, 0),
        unit: 'req/s',
        target: { op: '>=', value: 5_000 },
      },
      { metric: 'latency p50', value: round(result.latency.p50, 2), unit: 'ms' },
      { metric: 'latency p99', value: round(result.latency.p99, 2), unit: 'ms', target: { op: '<=', value: 25 } },
      { metric: 'latency max', value: round(result.latency.max, 2), unit: 'ms' },
      {
        metric: 'non-2xx + errors + timeouts',
        value: result.non2xx + result.errors + result.timeouts,
        unit: 'responses',
        target: { op: '<=', value: 0 },
      },
      { metric: 'messages queued in the store (warm-up included)', value: stored, unit: 'events' },
      // Validity: no 202 without its event (the store holds at least every measured 202, plus the warm-up's).
      {
        metric: 'stored minus 202s of the measured run',
        value: stored - (result.requests - result.non2xx),
        unit: 'events',
        target: { op: '>=', value: 0 },
      },
      {
        metric: 'outbox readable after the load',
        value: listed.items.length,
        unit: 'items (limit 1)',
        target: { op: '>=', value: 1 },
      },
    ];
    if (result.serverCpuPercent !== undefined)
      metrics.push({ metric: 'gateway CPU', value: round(result.serverCpuPercent, 0), unit: '% core' });
    metrics.push({ metric: 'autocannon CPU', value: round(result.loadGeneratorCpuPercent, 0), unit: '% core' });
    return metrics;
  } finally {
    await gateway.stop();
  }
}

function countQueued(dataDir: string): number {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return (
      db
        .prepare("SELECT count(*) AS n FROM events WHERE stream_id = ? AND type = 'OutboxMessageQueued'")
        .get(`outbox-${DEVICE}`) as { n: number }
    ).n;
  } finally {
    db.close();
  }
}
