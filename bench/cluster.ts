/**
 * cluster: several gateway processes on one SQLite file (docs/architecture.md, "Several processes").
 *
 * - GET /devices/:id with GATEWAY_PROCESSES=2 (one port, node:cluster) against a bare Koa hello-world in one
 *   process, 50 connections (the single-process ratio is bench `http`).
 * - POST /send/text (202) over 8 devices, one process vs GATEWAY_PROCESSES=2, 64 connections in all.
 * - webhook deliveries/s with 2 processes (bench `webhooks`' backlog drain, each device's injections sent to
 *   the process that runs it).
 * - failover: two processes (GATEWAY_CLUSTER=true, one port each, the default LEASE_TIMEOUT of 10 s), 10
 *   sandbox devices online; the process running most of them is killed with SIGKILL: the time until every one
 *   of its devices is online on the other.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Metric } from './lib/benchmark.js';
import { get as httpGet } from 'node:http';
import {
  type ChildServer,
  type GatewayChild,
  spawnGateway,
  spawnGateways,
  spawnServer,
  treeCpuSeconds,
} from './lib/child.js';
import { type HttpLoadResult, loadHttp } from './lib/http-load.js';
import { ratio, round } from './lib/stats.js';
import { leaseOwners, waitFor } from './lib/cluster-store.js';
import { measure as measureWebhooks } from './webhooks.js';

export const name = 'cluster';
export const description =
  'GATEWAY_PROCESSES=2: GET /devices/:id vs bare Koa, /send/text 2 processes vs 1, webhook deliveries/s on 2 processes, failover time after kill -9 (LEASE_TIMEOUT 10 s)';

const READ = { connections: 50, warmupSeconds: 2, durationSeconds: 10 };
const SEND = { warmupSeconds: 2, durationSeconds: 10 };
const SEND_DEVICES = 8;
const FAILOVER_DEVICES = 10;

export async function run(): Promise<Metric[]> {
  if (process.env.BENCH_CLUSTER_ONLY === 'failover') return [await failover()];
  if (process.env.BENCH_CLUSTER_ONLY === 'webhooks') return measureWebhooks(2, { latency: false });
  if (process.env.BENCH_CLUSTER_ONLY === 'sends') return measureSends();
  const metrics: Metric[] = [];
  const bare = await spawnServer({ name: 'bare-koa', script: 'bench/bare-koa.ts', healthPath: '/' });
  let koa: HttpLoadResult;
  try {
    koa = await loadHttp({ ...READ, url: `${bare.url}/` });
  } finally {
    await bare.stop();
  }
  metrics.push(
    ...(await measureSends(async (gateway) => {
      const read = await loadHttp({
        ...READ,
        url: `${gateway.url}/devices/bench-0`,
        headers: { 'x-admin-key': gateway.adminKey },
      });
      return [
        { metric: 'GATEWAY_PROCESSES=2 GET /devices/:id', value: round(read.requestsPerSecond, 0), unit: 'req/s' },
        { metric: 'bare Koa hello-world (one process)', value: round(koa.requestsPerSecond, 0), unit: 'req/s' },
        {
          metric: '2 processes / bare Koa',
          value: round(ratio(read.requestsPerSecond, koa.requestsPerSecond), 3),
          unit: 'ratio',
          target: { op: '>=', value: 0.6 },
        },
        {
          metric: 'GET non-2xx + errors (2 processes)',
          value: read.non2xx + read.errors,
          unit: 'responses',
          target: { op: '<=', value: 0 },
        },
      ];
    })),
  );
  metrics.push(...(await measureWebhooks(2, { latency: false })));
  metrics.push(
    await failover().catch((error: unknown) => {
      process.stderr.write(`failover run failed: ${(error as Error)?.stack ?? String(error)}\n`);
      return {
        metric: 'failover: kill -9 → devices online elsewhere',
        value: Number.NaN,
        unit: 's',
        target: { op: '<=' as const, value: 15 },
      };
    }),
  );
  return metrics;
}

/**
 * POST /send/text (202) over SEND_DEVICES devices, one process then GATEWAY_PROCESSES=2, and their ratio
 * (`BENCH_CLUSTER_ONLY=sends` runs only this). `beforeTwo` measures something else on the 2-process gateway
 * first (the GET ratio). Appends and the appends refused for a conflict are summed over the processes' /metrics.
 */
async function measureSends(beforeTwo?: (gateway: GatewayChild) => Promise<Metric[]>): Promise<Metric[]> {
  const metrics: Metric[] = [];
  const sends: number[] = [];
  for (const processes of [1, 2]) {
    const gateway = await spawnGateway({
      env: { DEFAULT_ENGINE: 'sandbox', GATEWAY_PROCESSES: String(processes), OUTBOX_SPACING: '0ms' },
    });
    try {
      // The workers start after the primary answers nothing: wait until both answer health.
      await sleep(processes > 1 ? 3_000 : 0);
      const keys: string[] = [];
      for (let d = 0; d < SEND_DEVICES; d++)
        keys.push(
          (
            await gateway.adminRequest<{ deviceKey: string }>(
              'POST',
              '/devices',
              { id: `bench-${d}`, name: 'Bench' },
              201,
            )
          ).deviceKey,
        );
      await sleep(1_000);
      if (processes === 2 && beforeTwo) metrics.push(...(await beforeTwo(gateway)));
      const before = await appendCounts(gateway, processes);
      const body = JSON.stringify({
        to: '4915112345678',
        text: 'Your order 4711 has shipped and will arrive tomorrow between 9:00 and 12:00.',
      });
      const results = await Promise.all(
        keys.map((key, d) =>
          loadHttp({
            ...SEND,
            // The windows run side by side: one of them measures the CPU of every gateway process.
            ...(d === 0 ? { serverCpuSeconds: () => treeCpuSeconds(gateway.pid) } : {}),
            connections: 64 / SEND_DEVICES,
            url: `${gateway.url}/devices/bench-${d}/send/text`,
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-device-key': key },
            body,
          }),
        ),
      );
      const after = await appendCounts(gateway, processes);
      const perSecond = results.reduce((sum, r) => sum + r.requestsPerSecond, 0);
      const appends = after.appends - before.appends;
      const conflicts = after.conflicts - before.conflicts;
      sends.push(perSecond);
      const label = `${processes} process${processes > 1 ? 'es' : ''}`;
      metrics.push(
        { metric: `POST /send/text (202), ${label}`, value: round(perSecond, 0), unit: 'req/s' },
        { metric: `send p99 (${label})`, value: round(Math.max(...results.map((r) => r.latency.p99)), 1), unit: 'ms' },
        {
          metric: `gateway CPU, all processes (${label})`,
          value: round(results[0].serverCpuPercent ?? Number.NaN, 0),
          unit: '% of a core',
        },
        {
          metric: `gateway CPU per 202 (${label})`,
          value: round((10 * (results[0].serverCpuPercent ?? Number.NaN)) / perSecond, 3),
          unit: 'ms',
        },
        {
          metric: `load generator CPU (${label})`,
          value: round(results[0].loadGeneratorCpuPercent, 0),
          unit: '% of a core',
        },
        {
          metric: `appends refused for a conflict (${label})`,
          value: round((100 * conflicts) / Math.max(1, appends + conflicts), 1),
          unit: '%',
        },
        {
          metric: `send non-2xx + errors (${processes})`,
          value: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
          unit: 'responses',
          target: { op: '<=', value: 0 },
        },
      );
    } finally {
      await gateway.stop();
    }
  }
  metrics.push({
    metric: '/send/text 2 processes / 1',
    value: round(ratio(sends[1], sends[0]), 3),
    unit: 'ratio',
    target: { op: '>=', value: 1.3 },
  });
  return metrics;
}

/**
 * Appends made and appends refused for a conflict, summed over the gateway's processes: /metrics answers for
 * the process that got the connection (node:cluster hands connections round), so it is asked on new
 * connections until every process (told apart by its start time) answered.
 */
async function appendCounts(gateway: GatewayChild, processes: number): Promise<{ appends: number; conflicts: number }> {
  const seen = new Map<string, { appends: number; conflicts: number }>();
  for (let tries = 0; seen.size < processes && tries < 20 * processes; tries++) {
    const text = await new Promise<string>((resolve, reject) => {
      const request = httpGet(
        `${gateway.url}/metrics`,
        { agent: false, headers: { 'x-admin-key': gateway.adminKey } },
        (response) => {
          let body = '';
          response
            .setEncoding('utf8')
            .on('data', (chunk: string) => (body += chunk))
            .on('end', () => resolve(body));
        },
      );
      request.on('error', reject);
    });
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
    const started = /^dmg_process_start_time_seconds (\S+)/m.exec(text)?.[1] ?? String(tries);
    seen.set(started, {
      appends: value(/^dmg_eventstore_append_duration_seconds_count (\S+)/m),
      conflicts: value(/^dmg_eventstore_append_failures_total\{reason="conflict"\} (\S+)/m),
    });
  }
  let appends = 0;
  let conflicts = 0;
  for (const counts of seen.values()) {
    appends += counts.appends;
    conflicts += counts.conflicts;
  }
  return { appends, conflicts };
}

async function failover(): Promise<Metric> {
  const nodes = await spawnGateways(2, { env: { DEFAULT_ENGINE: 'sandbox' } });
  const adminKey = nodes[0].adminKey;
  const dataDir = nodes[0].dataDir;
  try {
    const api = async (node: ChildServer, method: string, path: string, json?: unknown) => {
      const response = await fetch(`${node.url}${path}`, {
        method,
        headers: { 'x-admin-key': adminKey, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      return { status: response.status, body: (await response.json().catch(() => undefined)) as any };
    };
    const ids = Array.from({ length: FAILOVER_DEVICES }, (_, i) => `fo-${i}`);
    for (const id of ids) await api(nodes[0], 'POST', '/devices', { id, name: id, engine: 'sandbox' });
    for (const id of ids) await api(nodes[0], 'POST', `/devices/${id}/session/open`);
    const owners = () => leaseOwners(dataDir);
    await waitFor(() => owners().size === ids.length, 30_000, 'every device owned');
    for (const [i, id] of ids.entries()) {
      await waitFor(
        async () => (await api(nodes[0], 'GET', `/devices/${id}/session/state`)).body?.state === 'qr',
        30_000,
        `${id} qr`,
      );
      const owner = nodes.find((node) => node.pid === owners().get(id))!;
      const scanned = await api(owner, 'POST', `/sandbox/devices/${id}/scan`, {
        phone: `491510007${String(i).padStart(3, '0')}1`,
      });
      if (scanned.status !== 202)
        throw new Error(`scan of ${id} on ${owner.name}: ${scanned.status} ${JSON.stringify(scanned.body)}`);
    }
    for (const id of ids)
      await waitFor(
        async () => (await api(nodes[0], 'GET', `/devices/${id}/session/state`)).body?.state === 'online',
        30_000,
        `${id} online`,
      );
    const victim = nodes.reduce((a, b) =>
      [...owners().values()].filter((p) => p === a.pid).length >=
      [...owners().values()].filter((p) => p === b.pid).length
        ? a
        : b,
    );
    const survivor = nodes.find((node) => node !== victim)!;
    const moved = ids.filter((id) => owners().get(id) === victim.pid);
    const killedAt = performance.now();
    process.kill(victim.pid, 'SIGKILL');
    await waitFor(
      async () => {
        const current = owners();
        if (!moved.every((id) => current.get(id) === survivor.pid)) return false;
        const states = await Promise.all(
          moved.map(async (id) => (await api(survivor, 'GET', `/devices/${id}/session/state`)).body?.state),
        );
        return states.every((state) => state === 'online');
      },
      60_000,
      'the devices online on the survivor',
    );
    return {
      metric: `failover: kill -9 → ${moved.length} devices online elsewhere`,
      value: round((performance.now() - killedAt) / 1000, 2),
      unit: 's',
      target: { op: '<=', value: 15 },
    };
  } finally {
    for (const node of nodes) await node.stop().catch(() => undefined);
  }
}
