/**
 * groups: the groups read model and group fan-out through the sandbox network, on the real gateway (a
 * child process).
 *
 * - GET /groups for a device in 500 groups (each with a second member): latency of one call with one
 *   connection (the read model answers; no engine call per request), autocannon.
 * - A sandbox group of 256 sandbox devices (the creator and 255 members, each with a webhook to a receiver
 *   in this process): one text to the group, time from the send request until the last member's
 *   `message.received` webhook arrives. OUTBOX_SPACING is 0 for the run (its random pause is there to
 *   look human, not a cost of the fan-out), and WEBHOOK_CONCURRENCY is 256 (one delivery in flight per
 *   member; the default 64 sends them in four waves, which on a loaded 2-core machine took ~2 s).
 */
import { once } from 'node:events';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Metric } from './lib/benchmark.js';
import { gatewayRequest, onlineSandboxDevice, progress } from './lib/gateway-requests.js';
import { spawnGateway } from './lib/child.js';
import { loadHttp } from './lib/http-load.js';
import { round } from './lib/stats.js';

export const name = 'groups';
export const description =
  "GET /groups for a device in 500 groups (p99, one connection); one text to a sandbox group of 256 devices → the last member's webhook";

const GROUPS = 500;
const MEMBERS = 256;

export async function run(): Promise<Metric[]> {
  return [...(await listLatency()), ...(await fanOut())];
}

async function listLatency(): Promise<Metric[]> {
  const gateway = await spawnGateway({ env: { DEFAULT_ENGINE: 'sandbox' } });
  try {
    const owner = await onlineSandboxDevice(gateway, 'owner', '4915100000002');
    const started = performance.now();
    for (let i = 0; i < GROUPS; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, GROUPS - i) }, (_, j) =>
          gatewayRequest(
            gateway,
            'POST',
            `/devices/owner/groups`,
            { subject: `Group ${i + j}`, participants: ['4915100000004'] },
            201,
            owner.key,
          ),
        ),
      );
    }
    progress(`${GROUPS} groups created in ${round((performance.now() - started) / 1000, 1)} s`);
    const list = await gatewayRequest<{ items: unknown[] }>(
      gateway,
      'GET',
      '/devices/owner/groups',
      undefined,
      200,
      owner.key,
    );
    if (list.items.length !== GROUPS) throw new Error(`GET /groups listed ${list.items.length} groups, not ${GROUPS}`);
    const load = await loadHttp({
      url: `${gateway.url}/devices/owner/groups`,
      headers: { 'x-device-key': owner.key },
      connections: 1,
      warmupSeconds: 1,
      durationSeconds: 5,
      serverCpuSeconds: gateway.cpuSeconds,
    });
    return [
      {
        metric: `GET /groups (${GROUPS} groups) p99`,
        value: round(load.latency.p99, 2),
        unit: 'ms',
        target: { op: '<=', value: 10 },
      },
      { metric: `GET /groups (${GROUPS} groups) p50`, value: round(load.latency.p50, 2), unit: 'ms' },
      { metric: 'GET /groups, one connection', value: round(load.requestsPerSecond, 0), unit: 'req/s' },
      {
        metric: 'GET /groups non-2xx + errors',
        value: load.non2xx + load.errors,
        unit: 'responses',
        target: { op: '<=', value: 0 },
      },
    ];
  } finally {
    await gateway.stop();
  }
}

async function fanOut(): Promise<Metric[]> {
  const arrivals = new Map<string, number>();
  let waiter: (() => void) | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        deviceId: string;
        event: string;
        data: { body?: string };
      };
      if (
        envelope.event === 'message.received' &&
        envelope.data.body === 'hello group' &&
        !arrivals.has(envelope.deviceId)
      ) {
        arrivals.set(envelope.deviceId, performance.now());
        if (arrivals.size === MEMBERS - 1) waiter?.();
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const gateway = await spawnGateway({
    env: {
      DEFAULT_ENGINE: 'sandbox',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_HOST_RATE_PER_SECOND: '1000000',
      WEBHOOK_CONCURRENCY: '256',
      OUTBOX_SPACING: '0ms',
    },
  });
  try {
    const started = performance.now();
    const phones = Array.from({ length: MEMBERS }, (_, i) => `4915${String(i + 1).padStart(7, '0')}2`);
    const devices: Array<{ id: string; key: string }> = [];
    for (let i = 0; i < MEMBERS; i += 16) {
      devices.push(
        ...(await Promise.all(
          phones.slice(i, i + 16).map((phone, j) =>
            onlineSandboxDevice(gateway, `member-${i + j}`, phone, {
              url: receiverUrl,
              events: ['message.received'],
            }),
          ),
        )),
      );
    }
    progress(`${MEMBERS} devices online with hooks in ${round((performance.now() - started) / 1000, 1)} s`);
    const creator = devices[0];
    const group = await gatewayRequest<{ groupId: string; size: number }>(
      gateway,
      'POST',
      `/devices/${creator.id}/groups`,
      { subject: 'Everyone', participants: phones.slice(1) },
      201,
      creator.key,
    );
    if (group.size !== MEMBERS) throw new Error(`the group has ${group.size} members, not ${MEMBERS}`);
    // Every member's device has recorded the group (the network told each one) before the message goes.
    for (const member of devices.slice(1)) {
      const deadline = Date.now() + 30_000;
      while (
        (
          await gatewayRequest<{ items: unknown[] }>(
            gateway,
            'GET',
            `/devices/${member.id}/groups`,
            undefined,
            200,
            member.key,
          )
        ).items.length === 0
      ) {
        if (Date.now() > deadline) throw new Error(`${member.id} never learnt of the group`);
        await sleep(20);
      }
    }
    const done = new Promise<void>((resolve) => (waiter = resolve));
    const sentAt = performance.now();
    await gatewayRequest(
      gateway,
      'POST',
      `/devices/${creator.id}/send/text`,
      { to: group.groupId, text: 'hello group' },
      202,
      creator.key,
    );
    await Promise.race([
      done,
      sleep(30_000).then(() =>
        Promise.reject(new Error(`only ${arrivals.size} of ${MEMBERS - 1} members got the message in 30 s`)),
      ),
    ]);
    const times = [...arrivals.values()].map((at) => at - sentAt).sort((a, b) => a - b);
    return [
      {
        metric: `group of ${MEMBERS}: send → last member's webhook`,
        value: round(times.at(-1)! / 1000, 3),
        unit: 's',
        target: { op: '<=', value: 2 },
      },
      { metric: `group of ${MEMBERS}: send → first member's webhook`, value: round(times[0] / 1000, 3), unit: 's' },
      {
        metric: `group of ${MEMBERS}: members reached`,
        value: times.length,
        unit: 'devices',
        target: { op: '>=', value: MEMBERS - 1 },
      },
    ];
  } finally {
    await gateway.stop();
    server.closeAllConnections();
    server.close();
  }
}
