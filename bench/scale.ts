/**
 * scale: does a machine's gateway do more with more processes? GATEWAY_PROCESSES = 1, 2, 4, 8 (those with
 * N × 2 ≤ cores, and always 1 and 2), one port (node:cluster), load generators in processes of their own
 * (bench/lib/load-process.ts: one process cannot load eight):
 *
 * - POST /send/text (202) over 32 devices, and the gateway's CPU per 202, summed over its processes;
 * - GET /devices/:id over the same 32 devices;
 * - webhook deliveries/s of a backlog of 30,000 over 100 online sandbox devices (bench `webhooks`' drain,
 *   injections through whichever process gets the connection), and CPU per delivery.
 *
 * Then each figure against N = 1. Targets (issue 30), on a 16-core machine: sends and deliveries at N = 8
 * ≥ 4× N = 1, reads ≥ 6×, CPU per 202 at N = 8 ≤ 1.5× N = 1; on any machine, sends and deliveries at N = 2 are
 * never below N = 1. Short runs only to check that it works: BENCH_SCALE_SECONDS (measured window, default 10),
 * BENCH_SCALE_PROCESSES (e.g. `1,2`), BENCH_SCALE_ONLY=sends|reads|webhooks, BENCH_WEBHOOKS_BACKLOG and
 * BENCH_WEBHOOKS_DEVICES; BENCH_SCALE_CONNECTIONS (default 64) for the capacity beyond the latency bound.
 */
import { availableParallelism } from 'node:os';
import type { Metric } from './lib/benchmark.js';
import { progress } from './lib/gateway-requests.js';
import { type GatewayChild, spawnGateway, treeCpuSeconds } from './lib/child.js';
import { type LoadJob, loadFromProcesses } from './lib/load-process.js';
import { ratio, round } from './lib/stats.js';
import { everyProcessJoined, measure as measureWebhooks } from './webhooks.js';

export const name = 'scale';
export const description =
  'GATEWAY_PROCESSES = 1, 2, 4, 8 (as cores allow): /send/text 202/s and CPU per 202, GET /devices/:id, webhook deliveries/s of a 30,000 backlog; each against N = 1';

const DEVICES = 32;
/**
 * Closed-loop load: each connection sends its next request once the last is answered, so with few connections
 * the figure is connections / latency, not what the processes could do. BENCH_SCALE_CONNECTIONS raises it to
 * see the capacity; the latencies are reported beside the rates either way.
 */
const CONNECTIONS = Number(process.env.BENCH_SCALE_CONNECTIONS ?? 64);
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = Number(process.env.BENCH_SCALE_SECONDS ?? 10);
const ONLY = process.env.BENCH_SCALE_ONLY;
/** Every worker loads the code at once: on a small machine that takes a while. */
export const START_TIMEOUT_MS = 180_000;

/** N = 1, 2, 4, 8 where N × 2 ≤ cores; 1 and 2 always. */
export function processCounts(cores = availableParallelism()): number[] {
  const wanted = process.env.BENCH_SCALE_PROCESSES;
  if (wanted) return wanted.split(',').map((n) => Number(n.trim()));
  return [1, 2, 4, 8].filter((n) => n <= 2 || n * 2 <= cores);
}

/** Load generators: as many as the gateway has processes, at least 2, at most 6 (the 16-core run). */
const generatorsFor = (processes: number) => Math.min(6, Math.max(2, processes));

interface Figures {
  processes: number;
  sends?: number;
  cpuPer202?: number;
  sendLatency?: { p50: number; p99: number };
  reads?: number;
  cpuPerRead?: number;
  deliveries?: number;
  cpuPerDelivery?: number;
  failures: number;
}

export async function run(): Promise<Metric[]> {
  const counts = processCounts();
  const figures: Figures[] = [];
  for (const processes of counts) {
    const figure: Figures = { processes, failures: 0 };
    if (ONLY !== 'webhooks') await measureHttp(processes, figure);
    if (ONLY === undefined || ONLY === 'webhooks') await measureDeliveries(processes, figure);
    figures.push(figure);
  }
  return report(figures);
}

async function measureHttp(processes: number, figure: Figures): Promise<void> {
  const gateway = await spawnGateway({
    env: {
      DEFAULT_ENGINE: 'sandbox',
      GATEWAY_PROCESSES: String(processes),
      OUTBOX_SPACING: '0ms',
      OUTBOX_RATE_PER_MINUTE: '1000000',
    },
    startTimeoutMs: START_TIMEOUT_MS,
  });
  try {
    await everyProcessJoined(gateway, processes);
    const keys: string[] = [];
    for (let d = 0; d < DEVICES; d++)
      keys.push(
        (
          await gateway.adminRequest<{ deviceKey: string }>(
            'POST',
            '/devices',
            { id: `scale-${d}`, name: 'Bench', engine: 'sandbox' },
            201,
          )
        ).deviceKey,
      );
    const body = JSON.stringify({
      to: '4915112345678',
      text: 'Your order 4711 has shipped and will arrive tomorrow between 9:00 and 12:00.',
    });
    if (ONLY === undefined || ONLY === 'sends') {
      const sends = await load(gateway, processes, (d) => ({
        url: `${gateway.url}/devices/scale-${d}/send/text`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-device-key': keys[d] },
        body,
      }));
      figure.sends = sends.perSecond;
      figure.cpuPer202 = sends.cpuMsPerOp;
      figure.sendLatency = { p50: sends.p50, p99: sends.p99 };
      figure.failures += sends.failures;
      progress(
        `N=${processes}: ${round(sends.perSecond, 0)} sends/s, ${round(sends.cpuMsPerOp, 3)} ms CPU per 202, latency p50 ${round(sends.p50, 1)} ms, p99 ${round(sends.p99, 1)} ms`,
      );
    }
    if (ONLY === undefined || ONLY === 'reads') {
      const reads = await load(gateway, processes, (d) => ({
        url: `${gateway.url}/devices/scale-${d}`,
        // An admin-only route (a device key there is 403).
        headers: { 'x-admin-key': gateway.adminKey },
      }));
      figure.reads = reads.perSecond;
      figure.cpuPerRead = reads.cpuMsPerOp;
      figure.failures += reads.failures;
      progress(`N=${processes}: ${round(reads.perSecond, 0)} reads/s`);
    }
  } finally {
    await gateway.stop();
  }
}

/** The devices spread over the generators, CONNECTIONS in all; the gateway's CPU read around the window. */
async function load(
  gateway: GatewayChild,
  processes: number,
  target: (device: number) => LoadJob['targets'][number],
): Promise<{ perSecond: number; cpuMsPerOp: number; failures: number; p50: number; p99: number }> {
  const generators = generatorsFor(processes);
  const jobs: LoadJob[] = Array.from({ length: generators }, (_, g) => {
    const devices = Array.from({ length: DEVICES }, (_, d) => d).filter((d) => d % generators === g);
    return {
      targets: devices.map(target),
      connections: Math.max(devices.length, Math.round(CONNECTIONS / generators)),
      warmupSeconds: WARMUP_SECONDS,
      durationSeconds: DURATION_SECONDS,
    };
  });
  let cpuBefore = Number.NaN;
  let cpuAfter = Number.NaN;
  const result = await loadFromProcesses(jobs, {
    started: () => (cpuBefore = treeCpuSeconds(gateway.pid) ?? Number.NaN),
    ended: () => (cpuAfter = treeCpuSeconds(gateway.pid) ?? Number.NaN),
  });
  return {
    perSecond: result.requestsPerSecond,
    cpuMsPerOp: ((cpuAfter - cpuBefore) * 1000) / Math.max(1, result.requests),
    failures: result.non2xx + result.errors,
    p50: result.p50,
    p99: result.p99,
  };
}

async function measureDeliveries(processes: number, figure: Figures): Promise<void> {
  const metrics = await measureWebhooks(processes, { latency: false, oneMachine: true });
  const rate = metrics.find((m) => m.metric.startsWith('deliveries/s'))?.value ?? Number.NaN;
  const cpu = metrics.find((m) => m.metric.startsWith('gateway CPU while draining'))?.value ?? Number.NaN;
  figure.deliveries = rate;
  figure.cpuPerDelivery = (cpu / 100 / rate) * 1000;
  for (const m of metrics)
    if (/^(messages lost|injections refused)/.test(m.metric) && m.value > 0) figure.failures += m.value;
  progress(`N=${processes}: ${round(rate, 0)} deliveries/s`);
}

function report(figures: Figures[]): Metric[] {
  const [one] = figures;
  const metrics: Metric[] = [];
  const cores = availableParallelism();
  const at16 = cores >= 16;
  for (const f of figures) {
    const n = `N=${f.processes}`;
    const vsOne = (value: number | undefined, base: number | undefined) => round(ratio(value ?? NaN, base ?? NaN), 2);
    if (f.sends !== undefined) {
      metrics.push(
        { metric: `${n} POST /send/text (202)`, value: round(f.sends, 0), unit: 'req/s' },
        { metric: `${n} gateway CPU per 202 (all processes)`, value: round(f.cpuPer202 ?? NaN, 3), unit: 'ms' },
        {
          metric: `${n} 202 latency p50 (${CONNECTIONS} connections)`,
          value: round(f.sendLatency?.p50 ?? NaN, 1),
          unit: 'ms',
        },
        { metric: `${n} 202 latency p99`, value: round(f.sendLatency?.p99 ?? NaN, 1), unit: 'ms' },
      );
      if (f !== one) {
        const target = f.processes === 2 ? 1.0 : f.processes === 8 && at16 ? 4 : undefined;
        metrics.push({
          metric: `${n} sends / N=1`,
          value: vsOne(f.sends, one.sends),
          unit: 'ratio',
          ...(target === undefined ? {} : { target: { op: '>=' as const, value: target } }),
        });
        metrics.push({
          metric: `${n} CPU per 202 / N=1`,
          value: vsOne(f.cpuPer202, one.cpuPer202),
          unit: 'ratio',
          ...(f.processes === 8 && at16 ? { target: { op: '<=' as const, value: 1.5 } } : {}),
        });
      }
    }
    if (f.reads !== undefined) {
      metrics.push({ metric: `${n} GET /devices/:id`, value: round(f.reads, 0), unit: 'req/s' });
      if (f !== one)
        metrics.push({
          metric: `${n} reads / N=1`,
          value: vsOne(f.reads, one.reads),
          unit: 'ratio',
          ...(f.processes === 8 && at16 ? { target: { op: '>=' as const, value: 6 } } : {}),
        });
    }
    if (f.deliveries !== undefined) {
      metrics.push(
        { metric: `${n} webhook deliveries (backlog drain)`, value: round(f.deliveries, 0), unit: 'deliveries/s' },
        { metric: `${n} gateway CPU per delivery`, value: round(f.cpuPerDelivery ?? NaN, 3), unit: 'ms' },
      );
      if (f !== one) {
        const target = f.processes === 2 ? 1.0 : f.processes === 8 && at16 ? 4 : undefined;
        metrics.push({
          metric: `${n} deliveries / N=1`,
          value: vsOne(f.deliveries, one.deliveries),
          unit: 'ratio',
          ...(target === undefined ? {} : { target: { op: '>=' as const, value: target } }),
        });
      }
    }
    metrics.push({
      metric: `${n} non-2xx, errors, lost or refused`,
      value: f.failures,
      unit: 'responses',
      target: { op: '<=', value: 0 },
    });
  }
  return metrics;
}
