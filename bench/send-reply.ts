/**
 * send-reply: POST /devices/:id/send/text with `replyTo` (a message of the same chat, looked up in the
 * message index on every request) and `mentions`, accepted durably (202) by the gateway in a child
 * process, from 50 concurrent autocannon connections; as bench `send`, with the reply's extra work.
 */
import type { Metric } from './lib/benchmark.js';
import { spawnGateway } from './lib/child.js';
import { type HttpLoadOptions, loadHttp } from './lib/http-load.js';
import { round } from './lib/stats.js';

export const name = 'send-reply';
export const description =
  'POST /send/text with replyTo + mentions accepted durably (202), gateway in a child process, sandbox device, session closed, 50 connections';

const LOAD = { connections: 50, warmupSeconds: 2, durationSeconds: 10 } satisfies Partial<HttpLoadOptions>;
const DEVICE = 'bench-replier';
const TO = '4915112345678';

export async function run(): Promise<Metric[]> {
  const gateway = await spawnGateway({ env: { DEFAULT_ENGINE: 'sandbox' } });
  try {
    const device = await gateway.adminRequest<{ deviceKey: string }>(
      'POST',
      '/devices',
      { id: DEVICE, name: 'Bench replier' },
      201,
    );
    const headers = { 'content-type': 'application/json', 'x-device-key': device.deviceKey };
    const first = await fetch(`${gateway.url}/devices/${DEVICE}/send/text`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ to: TO, text: 'Where is my order?' }),
    });
    const { waMessageId } = (await first.json()) as { waMessageId: string };
    const body = JSON.stringify({
      to: TO,
      text: 'Your order 4711 has shipped, @4915112345679 will bring it tomorrow between 9:00 and 12:00.',
      replyTo: waMessageId,
      mentions: ['4915112345679'],
    });
    const result = await loadHttp({
      ...LOAD,
      url: `${gateway.url}/devices/${DEVICE}/send/text`,
      method: 'POST',
      headers,
      body,
      serverCpuSeconds: gateway.cpuSeconds,
    });
    const metrics: Metric[] = [
      {
        metric: 'POST /send/text with replyTo + mentions (202), 50 connections',
        value: round(result.requestsPerSecond, 0),
        unit: 'req/s',
        target: { op: '>=', value: 5_000 },
      },
      { metric: 'latency p50', value: round(result.latency.p50, 2), unit: 'ms' },
      { metric: 'latency p99', value: round(result.latency.p99, 2), unit: 'ms', target: { op: '<=', value: 25 } },
      {
        metric: 'non-2xx + errors + timeouts',
        value: result.non2xx + result.errors + result.timeouts,
        unit: 'responses',
        target: { op: '<=', value: 0 },
      },
    ];
    if (result.serverCpuPercent !== undefined)
      metrics.push({ metric: 'gateway CPU', value: round(result.serverCpuPercent, 0), unit: '% core' });
    return metrics;
  } finally {
    await gateway.stop();
  }
}
