/**
 * http: the gateway's HTTP stack on its cheapest authenticated read (GET /devices/:id with the admin key)
 * against a bare Koa hello-world, both in child processes, loaded with autocannon from this process.
 */
import type { Metric } from './lib/benchmark.js';
import { type ChildServer, spawnGateway, spawnServer } from './lib/child.js';
import { type HttpLoadOptions, type HttpLoadResult, loadHttp } from './lib/http-load.js';
import { ratio, round } from './lib/stats.js';

export const name = 'http';
export const description =
  'GET /devices/:id on the gateway (child process) vs a bare Koa hello-world, 50 connections, autocannon';

const LOAD = { connections: 50, warmupSeconds: 2, durationSeconds: 10 } satisfies Partial<HttpLoadOptions>;

export async function run(): Promise<Metric[]> {
  const gateway = await spawnGateway({ env: { DEFAULT_ENGINE: 'sandbox' } });
  let gw: HttpLoadResult;
  let gatewayLogBytes: number;
  try {
    const device = await gateway.adminRequest<{ id: string }>(
      'POST',
      '/devices',
      { id: 'bench-device', name: 'Bench device' },
      201,
    );
    const path = `/devices/${device.id}`;
    await gateway.adminRequest('GET', path, undefined, 200);
    const logBefore = gateway.outputBytes();
    gw = await load(gateway, path, { 'x-admin-key': gateway.adminKey });
    gatewayLogBytes = gateway.outputBytes() - logBefore;
  } finally {
    await gateway.stop();
  }

  const bare = await spawnServer({ name: 'bare-koa', script: 'bench/bare-koa.ts', healthPath: '/' });
  let koa: HttpLoadResult;
  try {
    koa = await load(bare, '/');
  } finally {
    await bare.stop();
  }

  const metrics: Metric[] = [
    { metric: 'gateway GET /devices/:id', value: round(gw.requestsPerSecond, 0), unit: 'req/s' },
    { metric: 'gateway latency p99', value: round(gw.latency.p99, 2), unit: 'ms' },
    { metric: 'bare Koa hello-world', value: round(koa.requestsPerSecond, 0), unit: 'req/s' },
    { metric: 'bare Koa latency p99', value: round(koa.latency.p99, 2), unit: 'ms' },
    {
      metric: 'gateway / bare Koa',
      value: round(ratio(gw.requestsPerSecond, koa.requestsPerSecond), 3),
      unit: 'ratio',
      target: { op: '>=', value: 0.5 },
    },
    // Validity checks: every request must have succeeded, and a warn-level gateway must not log per request.
    {
      metric: 'gateway non-2xx + errors',
      value: gw.non2xx + gw.errors,
      unit: 'responses',
      target: { op: '<=', value: 0 },
    },
    {
      metric: 'bare Koa non-2xx + errors',
      value: koa.non2xx + koa.errors,
      unit: 'responses',
      target: { op: '<=', value: 0 },
    },
    { metric: 'gateway log output under load', value: gatewayLogBytes, unit: 'bytes' },
  ];
  // Where the CPU went (server and load generator share the machine), in % of one core; Linux only.
  const cpu = (metric: string, percent: number | undefined) => {
    if (percent !== undefined) metrics.push({ metric, value: round(percent, 0), unit: '% core' });
  };
  cpu('gateway CPU', gw.serverCpuPercent);
  cpu('autocannon CPU (vs gateway)', gw.loadGeneratorCpuPercent);
  cpu('bare Koa CPU', koa.serverCpuPercent);
  cpu('autocannon CPU (vs bare Koa)', koa.loadGeneratorCpuPercent);
  return metrics;
}

function load(server: ChildServer, path: string, headers?: Record<string, string>): Promise<HttpLoadResult> {
  return loadHttp({ ...LOAD, url: `${server.url}${path}`, headers, serverCpuSeconds: server.cpuSeconds });
}
