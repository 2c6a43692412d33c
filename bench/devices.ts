/**
 * devices: 1,000 sandbox devices on one gateway (child process): created, opened, their QR code read and
 * scanned, until every one is online; then the resident memory each online device costs.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Metric } from './lib/benchmark.js';
import { gatewayRequest } from './lib/gateway-requests.js';
import { type GatewayChild, spawnGateway } from './lib/child.js';
import { round, summarize } from './lib/stats.js';

export const name = 'devices';
export const description =
  '1,000 sandbox devices created, opened and scanned over HTTP: time until all are online, RSS per online device';

const DEVICES = 1_000;
const WARMUP_DEVICES = 20;
const CONCURRENCY = 50;
const ONLINE_TIMEOUT_MS = 120_000;

interface Device {
  id: string;
  key: string;
  openedAt: number;
}

export async function run(): Promise<Metric[]> {
  const gateway = await spawnGateway({ env: { DEFAULT_ENGINE: 'sandbox' } });
  try {
    // Warm-up: load every code path once, so the baseline includes the code and only devices are counted.
    await bringAllOnline(gateway, await createDevices(gateway, 'warmup', WARMUP_DEVICES), WARMUP_DEVICES);
    await sleep(1_000);
    const rssBefore = rssBytes(gateway.pid);

    const createStarted = performance.now();
    const devices = await createDevices(gateway, 'bench', DEVICES);
    const createSeconds = (performance.now() - createStarted) / 1000;

    const onlineStarted = performance.now();
    await bringAllOnline(gateway, devices, WARMUP_DEVICES + DEVICES);
    const onlineSeconds = (performance.now() - onlineStarted) / 1000;

    // Per device: from its open request to the moment its session entered `online` (the gateway's clock).
    const latencies = await mapConcurrently(devices, async (device) => {
      const state = await gatewayRequest<{ state: string; since: string }>(
        gateway,
        'GET',
        `/devices/${device.id}/session/state`,
        undefined,
        200,
        device.key,
      );
      if (state.state !== 'online') throw new Error(`${device.id} is ${state.state}`);
      return Date.parse(state.since) - device.openedAt;
    });
    const perDevice = summarize(latencies);

    await sleep(1_000);
    const rssAfter = rssBytes(gateway.pid);
    const mb = (bytes: number) => bytes / 2 ** 20;
    return [
      { metric: 'devices brought online', value: DEVICES, unit: 'devices' },
      { metric: 'create 1,000 devices', value: round(createSeconds, 2), unit: 's' },
      {
        metric: 'open + QR + scan → all online',
        value: round(onlineSeconds, 2),
        unit: 's',
        target: { op: '<=', value: 10 },
      },
      { metric: 'open → online per device, median', value: round(perDevice.p50, 1), unit: 'ms' },
      { metric: 'open → online per device, p90', value: round(perDevice.p90, 1), unit: 'ms' },
      { metric: 'gateway RSS before (after warm-up)', value: round(mb(rssBefore), 1), unit: 'MB' },
      { metric: 'gateway RSS with 1,000 online', value: round(mb(rssAfter), 1), unit: 'MB' },
      {
        metric: 'RSS per online device',
        value: round(mb((rssAfter - rssBefore) / DEVICES), 3),
        unit: 'MB',
        target: { op: '<=', value: 0.5 },
      },
    ];
  } finally {
    await gateway.stop();
  }
}

async function createDevices(gateway: GatewayChild, prefix: string, count: number): Promise<Device[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
  return mapConcurrently(ids, async (id) => {
    const created = await gatewayRequest<{ deviceKey: string }>(gateway, 'POST', '/devices', {
      id,
      name: id,
      engine: 'sandbox',
    });
    return { id, key: created.deviceKey, openedAt: 0 };
  });
}

/** Each device: open, read its QR code (as a client shows it), scan it; then wait until `expectedOnline` devices are online. */
async function bringAllOnline(gateway: GatewayChild, devices: Device[], expectedOnline: number): Promise<void> {
  await mapConcurrently(devices, async (device, index) => {
    device.openedAt = Date.now();
    await gatewayRequest(gateway, 'POST', `/devices/${device.id}/session/open`, undefined, undefined, device.key);
    for (;;) {
      const qr = await fetch(`${gateway.url}/devices/${device.id}/session/qr`, {
        headers: { 'x-device-key': device.key },
      });
      await qr.arrayBuffer();
      if (qr.status === 200) break;
      if (qr.status !== 409) throw new Error(`GET qr of ${device.id} answered ${qr.status}`);
      await sleep(5);
    }
    // Distinct phones, none ending in 0000.
    await gatewayRequest(gateway, 'POST', `/sandbox/devices/${device.id}/scan`, {
      phone: `49151${String(1_000_000 + index * 10 + 1)}`,
    });
  });
  const deadline = Date.now() + ONLINE_TIMEOUT_MS;
  while ((await countOnline(gateway)) < expectedOnline) {
    if (Date.now() > deadline) throw new Error('not every device came online in time');
    await sleep(20);
  }
}

async function countOnline(gateway: GatewayChild): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page: { items: unknown[]; nextCursor: string | null } = await gatewayRequest(
      gateway,
      'GET',
      `/devices?state=online&limit=500${query}`,
    );
    count += page.items.length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

async function mapConcurrently<T, R>(items: readonly T[], work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}

/** Resident set size of a process, from /proc (Linux). */
function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb[1]) * 1024;
}
