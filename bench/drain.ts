/**
 * drain: messages/s from the outbox to `sent` through the sandbox engine, over 100 devices, with the
 * rate cap lifted (OUTBOX_RATE_PER_MINUTE very high, no random spacing). The messages are queued while
 * the sessions are closed; then every session is opened and the clock runs until the last is `sent`
 * (each send recorded as begun, handed to the sandbox, recorded sent; receipts follow as they would).
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Metric } from './lib/benchmark.js';
import { type GatewayChild, spawnGateway } from './lib/child.js';
import { round } from './lib/stats.js';

export const name = 'drain';
export const description =
  'outbox → sent through the sandbox engine over 100 devices, rate cap lifted (gateway in a child process)';

const DEVICES = 100;
const MESSAGES_PER_DEVICE = 150;
const QUEUE_CONCURRENCY = 50;
const TIMEOUT_MS = 60_000;

interface Device {
  id: string;
  key: string;
  phone: string;
}

export async function run(): Promise<Metric[]> {
  const gateway = await spawnGateway({
    env: { DEFAULT_ENGINE: 'sandbox', OUTBOX_RATE_PER_MINUTE: '1000000', OUTBOX_SPACING: '0ms' },
  });
  try {
    const devices = await linkDevices(gateway);
    await inParallel(devices, 20, (device) =>
      call(gateway, 'POST', `/devices/${device.id}/session/close`, device.key, {}),
    );
    await waitForStates(gateway, devices, 'closed');

    const total = DEVICES * MESSAGES_PER_DEVICE;
    const jobs = devices.flatMap((device) => Array.from({ length: MESSAGES_PER_DEVICE }, (_, i) => ({ device, i })));
    await inParallel(jobs, QUEUE_CONCURRENCY, ({ device, i }) =>
      // Recipients end in 7: numbers ending in 0000 do not exist in the sandbox.
      call(
        gateway,
        'POST',
        `/devices/${device.id}/send/text`,
        device.key,
        { to: `4917${String(i).padStart(7, '0')}7`, text: `Message ${i} from ${device.id}` },
        202,
      ),
    );

    const db = new Database(join(gateway.dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const after = (db.prepare('SELECT coalesce(max(position), 0) AS p FROM events').get() as { p: number }).p;
      const sentCount = db.prepare(
        "SELECT count(*) AS n, min(created_at) AS first, max(created_at) AS last FROM events WHERE position > ? AND type = 'MessageStatusChanged' AND json_extract(data, '$.status') = 'sent'",
      );
      const opened = Date.now();
      await inParallel(devices, 20, (device) =>
        call(gateway, 'POST', `/devices/${device.id}/session/open`, device.key),
      );
      let progress = { n: 0, first: 0, last: 0 };
      while ((progress = sentCount.get(after) as typeof progress).n < total) {
        if (Date.now() - opened > TIMEOUT_MS) {
          throw new Error(
            `only ${progress.n} of ${total} messages sent after ${TIMEOUT_MS / 1000} s\n--- gateway output ---\n${gateway.output().slice(-4_000)}`,
          );
        }
        await sleep(50);
      }
      const done = Date.now();
      const failed = (
        db
          .prepare(
            "SELECT count(*) AS n FROM events WHERE position > ? AND type = 'MessageStatusChanged' AND json_extract(data, '$.status') = 'failed'",
          )
          .get(after) as { n: number }
      ).n;
      const drainSeconds = (progress.last - progress.first) / 1000;
      return [
        { metric: `messages sent, ${DEVICES} devices × ${MESSAGES_PER_DEVICE}`, value: progress.n, unit: 'messages' },
        {
          metric: 'drain rate (first to last sent)',
          value: round(progress.n / Math.max(drainSeconds, 0.001), 0),
          unit: 'messages/s',
          target: { op: '>=', value: 2_000 },
        },
        {
          metric: 'drain rate (sessions opened to last sent)',
          value: round(progress.n / ((done - opened) / 1000), 0),
          unit: 'messages/s',
        },
        { metric: 'failed', value: failed, unit: 'messages', target: { op: '<=', value: 0 } },
      ];
    } finally {
      db.close();
    }
  } finally {
    await gateway.stop();
  }
}

/** Creates the devices and links each to a sandbox phone (open, scan, online). */
async function linkDevices(gateway: GatewayChild): Promise<Device[]> {
  const devices: Device[] = [];
  for (let n = 0; n < DEVICES; n++) {
    const id = `drain-${String(n).padStart(3, '0')}`;
    const created = await gateway.adminRequest<{ deviceKey: string }>('POST', '/devices', { id, name: id }, 201);
    devices.push({ id, key: created.deviceKey, phone: `491510${String(n + 1).padStart(6, '0')}` });
  }
  await inParallel(devices, 20, (device) => call(gateway, 'POST', `/devices/${device.id}/session/open`, device.key));
  await waitForStates(gateway, devices, 'qr');
  await inParallel(devices, 20, (device) =>
    gateway.adminRequest('POST', `/sandbox/devices/${device.id}/scan`, { phone: device.phone }),
  );
  await waitForStates(gateway, devices, 'online');
  return devices;
}

async function waitForStates(gateway: GatewayChild, devices: Device[], state: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const page = await gateway.adminRequest<{ items: unknown[] }>('GET', `/devices?state=${state}&limit=500`);
    if (page.items.length >= devices.length) return;
    if (Date.now() > deadline)
      throw new Error(`only ${page.items.length} of ${devices.length} devices reached ${state}`);
    await sleep(50);
  }
}

async function call(
  gateway: GatewayChild,
  method: string,
  path: string,
  deviceKey: string,
  body?: unknown,
  expect?: number,
): Promise<void> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { 'x-device-key': deviceKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (expect ? response.status !== expect : response.status >= 300)
    throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
}

async function inParallel<T>(items: T[], concurrency: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
}
