/**
 * webhooks: messages injected through the sandbox engine (POST /sandbox/devices/:id/inbound) over 100
 * online sandbox devices, delivered by the gateway (a child process) as signed webhooks to a receiver in
 * this process, so that injection and receipt are timed on one clock.
 *
 * - latency: injection → receipt at a steady 1,000 events/s (open loop: each injection leaves on its
 *   schedule whether or not earlier ones have arrived), after a warm-up at the same rate.
 * - deliveries/s: a backlog drained. The receiver holds its answers while 30,000 messages are injected
 *   as fast as the API takes them (each device's head delivery waits, the rest queue behind it in the
 *   store), then answers again: deliveries divided by the time until the last one arrived.
 *
 * All 100 devices send to one receiver host, so the per-host rate limit is raised for the run
 * (WEBHOOK_HOST_RATE_PER_SECOND; its default protects real receivers), and the timeout is long enough to
 * hold answers through the fill.
 */
import { once } from 'node:events';
import { Agent, type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import type { Metric } from './lib/benchmark.js';
import { progress, scanCode } from './lib/gateway-requests.js';
import { type GatewayChild, spawnGateway, spawnGateways, treeCpuSeconds, waitForSessionState } from './lib/child.js';
import { leaseOwners, waitFor } from './lib/cluster-store.js';
import { Samples, round, summarize } from './lib/stats.js';

export const name = 'webhooks';
export const description =
  'sandbox inbound messages over 100 devices → signed webhooks to a local receiver: backlog deliveries/s, injection→receipt latency at 1,000/s';

/** Fewer devices, a smaller backlog: only to check that a bench runs (its figures then mean nothing). */
const DEVICES = Number(process.env.BENCH_WEBHOOKS_DEVICES ?? 100);
const RATE = 1_000;
const WARMUP_SECONDS = 2;
const LATENCY_SECONDS = 10;
/** BENCH_WEBHOOKS_BACKLOG: a smaller backlog for a smoke run. */
const BACKLOG = Number(process.env.BENCH_WEBHOOKS_BACKLOG ?? '30000');
const FILL_CONCURRENCY = 64;
/** Every n-th webhook's signature is checked (all of them would load the receiver's process). */
const VERIFY_EVERY = 50;
/**
 * BENCH_WEBHOOKS_PER_DEVICE=3: the backlog is also drained with 3 webhooks per device (the hook and two more, each
 * its own lane, all to the receiver), and the total deliveries/s is held against one webhook per device's figure
 * of the same run (issue 34: ≥ 0.8×).
 */
const WEBHOOKS_PER_DEVICE = Number(process.env.BENCH_WEBHOOKS_PER_DEVICE ?? '1');
if (!Number.isInteger(WEBHOOKS_PER_DEVICE) || WEBHOOKS_PER_DEVICE < 1 || WEBHOOKS_PER_DEVICE > 10)
  throw new Error('BENCH_WEBHOOKS_PER_DEVICE must be a whole number from 1 to 10');

interface Device {
  id: string;
  key: string;
  /** Of its webhooks: the hook first, then `?w=1`, `?w=2`… */
  secrets: string[];
}

export async function run(): Promise<Metric[]> {
  const one = await measure(1, { latency: true });
  if (WEBHOOKS_PER_DEVICE === 1) return one;
  const several = await measure(1, { latency: false, webhooksPerDevice: WEBHOOKS_PER_DEVICE });
  const rate = (metrics: Metric[]) => metrics.find((m) => m.metric.startsWith('deliveries/s'))!.value;
  return [
    ...one,
    ...several,
    {
      metric: `deliveries/s with ${WEBHOOKS_PER_DEVICE} webhooks per device ÷ with one (same run)`,
      value: round(rate(several) / rate(one), 2),
      unit: '×',
      target: { op: '>=', value: 0.8 },
    },
  ];
}

/**
 * The bench on `processes` gateway processes sharing one store (bench `cluster` runs it on 2): each device's
 * injections go to the process that runs it (the sandbox network lives there), and every process delivers
 * the webhooks of the devices it runs.
 */
export async function measure(
  processes: number,
  {
    latency: withLatency,
    oneMachine = false,
    webhooksPerDevice = 1,
  }: {
    latency: boolean;
    /**
     * GATEWAY_PROCESSES=processes behind one port (node:cluster, bench `scale`) instead of a process per port:
     * injections go to whichever process gets the connection, carried to the device's owner from there.
     */
    oneMachine?: boolean;
    webhooksPerDevice?: number;
  },
): Promise<Metric[]> {
  const receiver = await startReceiver(webhooksPerDevice);
  const env = {
    DEFAULT_ENGINE: 'sandbox',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_HOST_RATE_PER_SECOND: '1000000',
    WEBHOOK_TIMEOUT_MS: '60000',
  };
  const nodes = oneMachine
    ? [await spawnGateway({ env: { ...env, GATEWAY_PROCESSES: String(processes) }, startTimeoutMs: 180_000 })]
    : await spawnGateways(processes, { env });
  if (oneMachine) await everyProcessJoined(nodes[0], processes);
  const owners = new Owners(nodes);
  // Injections share a bounded pool of keep-alive connections, as a real client would.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const label =
    (processes === 1 ? '' : `, ${processes} processes`) +
    (webhooksPerDevice === 1 ? '' : `, ${webhooksPerDevice} webhooks per device`);
  /** Every accepted injection arrives once at each of its device's webhooks. */
  const expected = (messages: number) => messages * webhooksPerDevice;
  try {
    const setupStarted = performance.now();
    const devices = await prepareDevices(owners, receiver.url, webhooksPerDevice);
    progress(`${DEVICES} devices online with hooks in ${seconds(setupStarted)} s${label}`);
    receiver.secrets = new Map(devices.flatMap((d) => d.secrets.map((secret, w) => [`${d.id}/${w}`, secret] as const)));
    let seq = 0;
    const inject = (n: number) => {
      const id = devices[n % DEVICES].id;
      return injectOne(agent, owners.of(id), id, n, receiver);
    };
    const metrics: Metric[] = [];

    if (withLatency) {
      // Latency at a steady rate (the warm-up's figures are dropped).
      await steady(inject, () => seq++, WARMUP_SECONDS);
      await receiver.waitForCount(
        expected(seq - receiver.injectErrors),
        30_000,
        () => `warm-up; ${receiver.injectErrors} injections refused`,
      );
      const firstMeasured = seq;
      const steadyResult = await steady(inject, () => seq++, LATENCY_SECONDS);
      await receiver.waitForCount(
        expected(seq - receiver.injectErrors),
        30_000,
        () => `latency run; ${receiver.injectErrors} injections refused`,
      );
      progress(`latency run done: ${seq - firstMeasured} messages`);
      const latencies = new Samples(RATE * LATENCY_SECONDS);
      for (let n = firstMeasured; n < seq; n++) {
        const received = receiver.receivedAt[n * webhooksPerDevice];
        if (received !== undefined) latencies.push(received - receiver.sentAt[n]);
      }
      const latency = summarize(latencies.values());
      metrics.push(
        { metric: 'injection → receipt p50 at 1,000/s', value: round(latency.p50, 2), unit: 'ms' },
        {
          metric: 'injection → receipt p99 at 1,000/s',
          value: round(latency.p99, 2),
          unit: 'ms',
          target: { op: '<=', value: 50 },
        },
        { metric: 'injection → receipt max at 1,000/s', value: round(latency.max, 2), unit: 'ms' },
        { metric: 'injection rate achieved (latency run)', value: round(steadyResult.perSecond, 0), unit: 'events/s' },
      );
    }

    // Backlog: hold the answers, fill, release, time the drain.
    receiver.hold();
    const fillStart = seq;
    const fillStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: FILL_CONCURRENCY }, async () => {
        while (next < BACKLOG) {
          next++;
          await inject(seq++);
        }
      }),
    );
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    progress(`backlog of ${BACKLOG} injected in ${round(fillSeconds, 1)} s`);
    await sleep(1_000); // the last appends of the fill land before the clock starts
    const cpuSeconds = () =>
      oneMachine
        ? (treeCpuSeconds(nodes[0].pid) ?? Number.NaN)
        : nodes.reduce((sum, node) => sum + (node.cpuSeconds() ?? Number.NaN), 0);
    const cpuBefore = cpuSeconds();
    const drainStarted = performance.now();
    const receivedBefore = receiver.count;
    receiver.release();
    await receiver.waitForCount(
      expected(seq - receiver.injectErrors),
      120_000,
      () => `backlog drain; ${receiver.injectErrors} injections refused`,
    );
    const drainSeconds = (receiver.lastReceivedAt - drainStarted) / 1000;
    const cpu = cpuSeconds() - cpuBefore;
    const drained = receiver.count - receivedBefore;

    metrics.unshift({
      metric: `deliveries/s (backlog of ${BACKLOG.toLocaleString('en-US')} over ${DEVICES} devices${label})`,
      value: round(drained / drainSeconds, 0),
      unit: 'deliveries/s',
      target: { op: '>=', value: 5_000 },
    });
    metrics.push(
      {
        metric: `injection rate, API flat out (backlog fill${label})`,
        value: round((seq - fillStart) / fillSeconds, 0),
        unit: 'events/s',
      },
      // Validity: every accepted injection arrived once at least, signed with its device's secret.
      {
        metric: `messages lost${label}`,
        value: expected(seq - receiver.injectErrors) - receiver.count,
        unit: 'messages',
        target: { op: '<=', value: 0 },
      },
      {
        metric: `injections refused${label}`,
        value: receiver.injectErrors,
        unit: 'requests',
        target: { op: '<=', value: 0 },
      },
      {
        metric: `signatures not verified (sampled${label})`,
        value: receiver.badSignatures,
        unit: 'webhooks',
        target: { op: '<=', value: 0 },
      },
      { metric: `duplicate deliveries${label}`, value: receiver.duplicates, unit: 'webhooks' },
    );
    if (!Number.isNaN(cpu))
      metrics.push({
        metric: `gateway CPU while draining${label}`,
        value: round((cpu / drainSeconds) * 100, 0),
        unit: '% core',
      });
    return metrics;
  } finally {
    agent.destroy();
    for (const node of nodes) await node.stop();
    await receiver.close();
  }
}

/** Waits until every process of a GATEWAY_PROCESSES gateway has joined (devices move while they join). */
export async function everyProcessJoined(gateway: GatewayChild, processes: number): Promise<void> {
  if (processes <= 1) return;
  await waitFor(
    async () =>
      (
        await gateway.adminRequest<{ cluster?: { members?: unknown[] } }>('GET', '/health').catch(() => ({
          cluster: undefined,
        }))
      ).cluster?.members?.length === processes,
    120_000,
    `${processes} processes joined`,
  );
}

/** Which process runs a device: the only one (or one port for all), or the holder of its lease in the shared store. */
class Owners {
  private readonly known = new Map<string, GatewayChild>();

  constructor(readonly nodes: readonly GatewayChild[]) {}

  /** Waits until the device has an owner and remembers it (devices stay put while nobody joins or leaves). */
  async find(deviceId: string): Promise<GatewayChild> {
    if (this.nodes.length === 1) return this.nodes[0];
    let owner: GatewayChild | undefined;
    await waitFor(
      () => {
        const pid = leaseOwners(this.nodes[0].dataDir).get(deviceId);
        owner = this.nodes.find((node) => node.pid === pid);
        return owner !== undefined;
      },
      30_000,
      `an owner for ${deviceId}`,
    );
    this.known.set(deviceId, owner!);
    return owner!;
  }

  of(deviceId: string): GatewayChild {
    return this.nodes.length === 1 ? this.nodes[0] : this.known.get(deviceId)!;
  }
}

/**
 * Creates the devices, brings each session online through the sandbox, and points its hook (and its further
 * webhooks, `?w=1`, `?w=2`…) at the receiver.
 */
async function prepareDevices(owners: Owners, receiverUrl: string, webhooksPerDevice: number): Promise<Device[]> {
  const ids = Array.from({ length: DEVICES }, (_, i) => `bench-${String(i).padStart(3, '0')}`);
  const devices: Device[] = [];
  for (let i = 0; i < ids.length; i += 10) {
    devices.push(
      ...(await Promise.all(
        ids
          .slice(i, i + 10)
          .map((id, j) =>
            prepareDevice(owners, id, `49151${String(i + j + 1).padStart(6, '0')}1`, receiverUrl, webhooksPerDevice),
          ),
      )),
    );
  }
  return devices;
}

async function prepareDevice(
  owners: Owners,
  id: string,
  phone: string,
  receiverUrl: string,
  webhooksPerDevice: number,
): Promise<Device> {
  const gateway = owners.nodes[0];
  const { deviceKey } = await gateway.adminRequest<{ deviceKey: string }>(
    'POST',
    '/devices',
    { id, name: id, engine: 'sandbox' },
    201,
  );
  await gateway.adminRequest('POST', `/devices/${id}/session/open`);
  await waitForSessionState(gateway, id, 'qr');
  const owner = await owners.find(id);
  // Scanned on the device's owner (sandbox injections run there).
  await scanCode(owner, id, phone);
  await waitForSessionState(gateway, id, 'online');
  const hooks = await gateway.adminRequest<{ secret: string }>(
    'PUT',
    `/devices/${id}/hooks`,
    { url: receiverUrl, events: ['message.received'] },
    200,
  );
  const secrets = [hooks.secret];
  for (let w = 1; w < webhooksPerDevice; w++) {
    const webhook = await gateway.adminRequest<{ secret: string }>(
      'POST',
      `/devices/${id}/webhooks`,
      { url: `${receiverUrl}?w=${w}`, events: ['message.received'] },
      201,
    );
    secrets.push(webhook.secret);
  }
  return { id, key: deviceKey, secrets };
}

function injectOne(
  agent: Agent,
  gateway: GatewayChild,
  deviceId: string,
  n: number,
  receiver: Receiver,
): Promise<void> {
  const body = JSON.stringify({ from: '4915199990001', body: String(n) });
  return new Promise((resolve) => {
    const refused = (why: string) => {
      if (receiver.injectErrors++ === 0) progress(`first refused injection: ${why}`);
      resolve();
    };
    receiver.sentAt[n] = performance.now();
    const req = request(`${gateway.url}/sandbox/devices/${deviceId}/inbound`, {
      method: 'POST',
      agent,
      headers: {
        'x-admin-key': gateway.adminKey,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk));
      res.on('end', () => (res.statusCode === 202 ? resolve() : refused(`${res.statusCode} ${text.slice(0, 300)}`)));
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      // The gateway closed this idle keep-alive socket (after its keepAliveTimeout) just as the request went out,
      // unread: a client sends it again (the pattern of node's http docs, `request.reusedSocket`).
      if (req.reusedSocket && error.code === 'ECONNRESET')
        void injectOne(agent, gateway, deviceId, n, receiver).then(resolve);
      else refused(error.message);
    });
    req.end(body);
  });
}

/** Injects at RATE per second for `seconds`, on schedule (open loop). */
async function steady(
  inject: (n: number) => Promise<void>,
  take: () => number,
  seconds: number,
): Promise<{ perSecond: number }> {
  const total = RATE * seconds;
  const started = performance.now();
  const inFlight: Array<Promise<void>> = [];
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * RATE));
    for (; sent < due; sent++) inFlight.push(inject(take()));
    await sleep(1);
  }
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  return { perSecond: total / elapsed };
}

const seconds = (startedMs: number) => round((performance.now() - startedMs) / 1000, 1);

interface Receiver {
  url: string;
  secrets: Map<string, string>;
  sentAt: number[];
  receivedAt: number[];
  count: number;
  lastReceivedAt: number;
  duplicates: number;
  badSignatures: number;
  injectErrors: number;
  hold(): void;
  release(): void;
  waitForCount(count: number, timeoutMs: number, what: () => string): Promise<void>;
  close(): Promise<void>;
}

/** Counts a message once per webhook (`?w=` in the URL: 0 for the hook); `receivedAt[n * perDevice + w]`. */
async function startReceiver(perDevice = 1): Promise<Receiver> {
  let held: Array<() => void> | undefined;
  let waiter: { count: number; resolve: () => void } | undefined;
  let checked = 0;
  const signers = new Map<string, Webhook>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const now = performance.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const envelope = JSON.parse(body) as { deviceId: string; data: { body: string } };
      const query = req.url?.indexOf('?w=') ?? -1;
      const w = query === -1 ? 0 : Number(req.url!.slice(query + 3));
      const n = Number(envelope.data.body) * perDevice + w;
      if (receiver.receivedAt[n] === undefined) {
        receiver.receivedAt[n] = now;
        receiver.count++;
        receiver.lastReceivedAt = now;
      } else receiver.duplicates++;
      if (checked++ % VERIFY_EVERY === 0) {
        const secret = receiver.secrets.get(`${envelope.deviceId}/${w}`)!;
        let signer = signers.get(secret);
        if (!signer) signers.set(secret, (signer = new Webhook(secret)));
        try {
          signer.verify(body, req.headers as Record<string, string>);
        } catch {
          receiver.badSignatures++;
        }
      }
      const answer = () => res.writeHead(204).end();
      if (held) held.push(answer);
      else answer();
      if (waiter && receiver.count >= waiter.count) waiter.resolve();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    secrets: new Map(),
    sentAt: [],
    receivedAt: [],
    count: 0,
    lastReceivedAt: 0,
    duplicates: 0,
    badSignatures: 0,
    injectErrors: 0,
    hold() {
      held = [];
    },
    release() {
      const answers = held ?? [];
      held = undefined;
      for (const answer of answers) answer();
    },
    waitForCount(count, timeoutMs, what) {
      if (receiver.count >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`received ${receiver.count} of ${count} webhooks within ${timeoutMs} ms (${what()})`)),
          timeoutMs,
        );
        waiter = {
          count,
          resolve: () => {
            clearTimeout(timer);
            waiter = undefined;
            resolve();
          },
        };
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}
