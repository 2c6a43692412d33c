/**
 * `npm run chaos:cluster [-- --seconds 120] [--processes 3]`: three gateway processes (or as many as asked) on one SQLite file (GATEWAY_CLUSTER=true,
 * one port each), 30 sandbox devices online with webhooks, sends offered at 300/s through every process and
 * sandbox inbound at 100/s (to the process running the device), open loop (a slow answer does not lower the
 * offered rate; at most MAX_IN_FLIGHT of a kind unanswered); every 10 s one process is killed with SIGKILL
 * and started again. It prints the offered and acknowledged rates. Then it checks, from the log and the receiver:
 * - every 202 is sent exactly once (one `sent` per waMessageId, each under the id it was acknowledged with);
 * - every `sent` status and every inbound message reached the webhook receiver (duplicates counted);
 * - no device was run by two processes at once (the lease streams: each acquisition follows a release or
 *   the holder's silence; the processes' /health counts add up to the devices at the end);
 * - OUTBOX_RATE_PER_MINUTE was never exceeded in any 60 s window (the tries' start times on each stream).
 * Exit code 1 when a check failed.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildServer, spawnServer } from './lib/child.js';
import { round } from './lib/stats.js';
import { makeTempDir } from './lib/temp.js';
import { leaseOwners, queryStore, waitFor as waitUntil } from './lib/cluster-store.js';

/** The chaos run polls less often than the bench: its checks read the whole file. */
const waitFor = (check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) =>
  waitUntil(check, timeoutMs, what, 200);

const DEVICES = 30;
const SEND_PER_SECOND = 300;
const INBOUND_PER_SECOND = 100;
const KILL_EVERY_MS = 10_000;
const RATE_PER_MINUTE = 1_200;
/** Requests of one kind (sends, inbound) the load may have unanswered at once; beyond it a scheduled one is skipped (and counted). */
const MAX_IN_FLIGHT = 256;
const ADMIN_KEY = 'ak_chaos_cluster_0123456789abcdef';

const option = (name: string, fallback: number, least: number) => {
  const index = process.argv.indexOf(name);
  return index < 0 ? fallback : Math.max(least, Number(process.argv[index + 1]));
};
const seconds = option('--seconds', 120, 10);
/** One is killed at a time: at least two, so that someone is left to take its devices. */
const processes = option('--processes', 3, 2);
const log = (line: string) => process.stderr.write(`  ${line}\n`);

async function main(): Promise<number> {
  const data = makeTempDir('cluster-chaos');
  const received = new Map<string, number>();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      try {
        const envelope = JSON.parse(body) as { event: string; data: { waMessageId?: string; status?: string } };
        const key = `${envelope.event}:${envelope.data.waMessageId}:${envelope.data.status ?? ''}`;
        received.set(key, (received.get(key) ?? 0) + 1);
      } catch {
        // not a webhook
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const env = (worker: number) => ({
    LOG_LEVEL: 'warn',
    DATA_DIR: data.path,
    ADMIN_API_KEY: ADMIN_KEY,
    DEFAULT_ENGINE: 'sandbox',
    GATEWAY_CLUSTER: 'true',
    GATEWAY_WORKER: String(worker),
    OUTBOX_SPACING: '0ms',
    OUTBOX_RATE_PER_MINUTE: String(RATE_PER_MINUTE),
    SANDBOX_DELIVERED_DELAY_MS: '200',
    SANDBOX_READ_DELAY_MS: '200',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_HOST_RATE_PER_SECOND: '100000',
    WEBHOOK_RETRY_SCHEDULE: '250ms,500ms,1s,1s,2s,2s,5s,5s,10s',
  });
  const start = (worker: number) =>
    spawnServer({
      name: `gateway-${worker}`,
      script: 'src/main.ts',
      healthPath: '/health',
      env: env(worker),
      startTimeoutMs: 120_000,
    });
  const nodes: Array<ChildServer | undefined> = await Promise.all(
    Array.from({ length: processes }, (_, i) => start(i + 1)),
  );
  const live = () => nodes.filter((node): node is ChildServer => node !== undefined);
  const api = async (node: ChildServer, method: string, path: string, json?: unknown, key?: string) => {
    const response = await fetch(`${node.url}${path}`, {
      method,
      headers: {
        ...(key ? { 'x-device-key': key } : { 'x-admin-key': ADMIN_KEY }),
        ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: json === undefined ? undefined : JSON.stringify(json),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, body: (await response.json().catch(() => undefined)) as any };
  };
  const failures: string[] = [];
  try {
    const keys = new Map<string, string>();
    const ids = Array.from({ length: DEVICES }, (_, i) => `cc-${i}`);
    for (const id of ids) {
      keys.set(id, (await api(live()[0], 'POST', '/devices', { id, name: id, engine: 'sandbox' })).body.deviceKey);
      await api(live()[0], 'PUT', `/devices/${id}/hooks`, {
        url: hookUrl,
        events: ['message.status', 'message.received'],
      });
      await api(live()[0], 'POST', `/devices/${id}/session/open`);
    }
    await waitFor(() => leaseOwners(data.path).size === DEVICES, 60_000, 'owners');
    for (const [i, id] of ids.entries()) {
      await waitFor(
        async () => (await api(live()[0], 'GET', `/devices/${id}/session/state`)).body?.state === 'qr',
        60_000,
        `${id} qr`,
      );
      const owner = live().find((node) => node.pid === leaseOwners(data.path).get(id))!;
      await api(owner, 'POST', `/sandbox/devices/${id}/scan`, { phone: `4915100${String(i).padStart(5, '0')}1` });
    }
    for (const id of ids)
      await waitFor(
        async () => (await api(live()[0], 'GET', `/devices/${id}/session/state`)).body?.state === 'online',
        60_000,
        `${id} online`,
      );
    log(`${DEVICES} devices online over ${processes} processes`);

    const acknowledged = new Set<string>();
    const inbound = new Set<string>();
    let stop = false;
    // Who runs each device, read from the lease streams twice a second (not once per injection).
    let owners = leaseOwners(data.path);
    const ownersTimer = setInterval(() => {
      try {
        owners = leaseOwners(data.path);
      } catch {
        // the file is busy: keep the last answer
      }
    }, 500);
    // Open loop: requests leave on their schedule whether or not earlier ones were answered (up to a cap in
    // flight), so a slow answer during a failover does not lower the offered rate.
    const offered = { sends: 0, inbound: 0, skipped: 0 };
    const inFlight = new Map<() => Promise<void>, number>();
    const fire = (request: () => Promise<void>) => {
      const now = inFlight.get(request) ?? 0;
      if (now >= MAX_IN_FLIGHT) {
        offered.skipped += 1;
        return;
      }
      inFlight.set(request, now + 1);
      void request()
        .catch(() => undefined)
        .finally(() => inFlight.set(request, inFlight.get(request)! - 1));
    };
    let n = 0;
    let m = 0;
    const sendOne = async () => {
      const id = ids[n++ % DEVICES];
      const nodesNow = live();
      const node = nodesNow[n % nodesNow.length];
      if (!node) return;
      offered.sends += 1;
      const answer = await api(
        node,
        'POST',
        `/devices/${id}/send/text`,
        { to: '4915199999999', text: `m${n}` },
        keys.get(id),
      );
      if (answer.status === 202) acknowledged.add(answer.body.waMessageId);
    };
    const injectOne = async () => {
      const id = ids[m++ % DEVICES];
      const node = live().find((candidate) => candidate.pid === owners.get(id));
      if (!node) return;
      offered.inbound += 1;
      const answer = await api(node, 'POST', `/sandbox/devices/${id}/inbound`, {
        from: '4915188888888',
        body: `in${m}`,
      });
      if (answer.status === 202 && answer.body?.waMessageId) inbound.add(answer.body.waMessageId);
    };
    const schedule = async (perSecond: number, request: () => Promise<void>) => {
      const begun = performance.now();
      for (let k = 0; !stop; k++) {
        const due = begun + (k * 1000) / perSecond;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        fire(request);
      }
    };
    const load = [schedule(SEND_PER_SECOND, sendOne), schedule(INBOUND_PER_SECOND, injectOne)];
    const startedAt = Date.now();
    let cycle = 0;
    while (Date.now() - startedAt < seconds * 1000) {
      await sleep(KILL_EVERY_MS);
      const index = cycle++ % processes;
      const victim = nodes[index];
      if (!victim) continue;
      process.kill(victim.pid, 'SIGKILL');
      nodes[index] = undefined;
      log(
        `cycle ${cycle}: killed gateway-${index + 1} (${acknowledged.size} sends acknowledged, ${inbound.size} inbound)`,
      );
      void start(index + 1).then((node) => (nodes[index] = node));
    }
    stop = true;
    await Promise.all(load);
    clearInterval(ownersTimer);
    await waitFor(() => [...inFlight.values()].every((count) => count === 0), 60_000, 'the last requests answered');
    await waitFor(() => live().length === processes, 120_000, 'every process back');
    log('load stopped; waiting for the outboxes and webhooks to drain');
    // Every acknowledged id, not a count: sends cut by a kill after their append are sent too, unacknowledged.
    await waitFor(
      () => {
        const ids = sentIds(data.path);
        return [...acknowledged].every((id) => ids.has(id));
      },
      180_000,
      'every send',
    ).catch((error: Error) => failures.push(error.message));
    const sent = sentEvents(data.path);
    const twice = sent.length - new Set(sent).size;
    if (twice > 0) failures.push(`${twice} messages recorded sent twice`);
    const missing = [...acknowledged].filter((id) => !new Set(sent).has(id));
    if (missing.length > 0) failures.push(`${missing.length} acknowledged messages never sent`);
    await waitFor(
      () =>
        [...acknowledged].every((id) => received.has(`message.status:${id}:sent`)) &&
        [...inbound].every((id) => received.has(`message.received:${id}:`)),
      180_000,
      'every webhook',
    ).catch((error: Error) => failures.push(error.message));
    const duplicates = [...received.values()].filter((count) => count > 1).length;
    const over = rateExceeded(data.path, RATE_PER_MINUTE);
    if (over > 0) failures.push(`${over} windows over the rate`);
    const health = await Promise.all(
      live().map(async (node) => (await api(node, 'GET', '/health')).body.cluster.devicesOwned as number),
    );
    await waitFor(
      async () =>
        (
          await Promise.all(
            live().map(async (node) => (await api(node, 'GET', '/health')).body.cluster.devicesOwned as number),
          )
        ).reduce((a, b) => a + b, 0) === DEVICES,
      60_000,
      'one owner per device',
    ).catch((error: Error) => failures.push(error.message));
    process.stdout.write(
      `${cycle} kills in ${seconds} s; offered ${offered.sends} sends (${round(offered.sends / seconds)}/s) and ${offered.inbound} inbound ` +
        `(${round(offered.inbound / seconds)}/s), ${offered.skipped} skipped at ${MAX_IN_FLIGHT} of a kind in flight\n` +
        `${acknowledged.size} sends acknowledged (${round(acknowledged.size / seconds)}/s), ${sent.length} sent (${twice} twice); ${inbound.size} inbound; ` +
        `${received.size} distinct webhooks, ${duplicates} with duplicates; devices per process at the end ${health.join('/')}\n`,
    );
    for (const failure of failures) process.stdout.write(`FAILED: ${failure}\n`);
    return failures.length > 0 ? 1 : 0;
  } finally {
    for (const node of live()) await node.stop().catch(() => undefined);
    receiver.close();
    data.remove();
  }
}

function sentEvents(dataDir: string): string[] {
  return queryStore<{ data: string }>(
    dataDir,
    `SELECT data FROM events WHERE stream_id LIKE 'outbox-%' AND type = 'MessageStatusChanged'`,
  )
    .map((row) => JSON.parse(row.data) as { waMessageId: string; status: string })
    .filter((data) => data.status === 'sent')
    .map((data) => data.waMessageId);
}

const sentIds = (dataDir: string) => new Set(sentEvents(dataDir));

/** Windows of 60 s (starting at each try) holding more tries of one device than the rate allows. */
function rateExceeded(dataDir: string, rate: number): number {
  const starts = new Map<string, number[]>();
  for (const row of queryStore<{ stream_id: string; data: string }>(
    dataDir,
    `SELECT stream_id, data FROM events WHERE type = 'OutboxMessageSending' ORDER BY position`,
  )) {
    const at = (JSON.parse(row.data) as { startedAt?: number }).startedAt;
    if (at !== undefined) starts.set(row.stream_id, [...(starts.get(row.stream_id) ?? []), at]);
  }
  let over = 0;
  for (const times of starts.values()) {
    times.sort((a, b) => a - b);
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i] - times[j] >= 60_000) j++;
      if (i - j + 1 > rate) over++;
    }
  }
  return over;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
