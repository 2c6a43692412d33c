/**
 * stream: the live event stream (GET /stream, GET /devices/:id/stream) on one gateway process (a child),
 * read by clients in this process, so that injection and receipt are timed on one clock.
 *
 * - fan-out latency: 1,000 concurrent clients (half on /stream with the admin key, half on the device's
 *   own stream with its key); inbound messages injected with POST /sandbox/devices/:id/inbound at a steady
 *   100/s (open loop) after a warm-up; injection → arrival on every client, p50/p99 (target p99 ≤ 100 ms);
 *   every client must get every message.
 * - memory: the gateway's RSS with the 1,000 clients connected and idle, minus its RSS before they came,
 *   per client (target ≤ 50 KB).
 * - resume: a log of 1,000,000 events (bench/rebuild.ts's history: 1,000 devices sending and receiving),
 *   read models rebuilt, the gateway started on it; one client asks /stream?after=0 and reads to the last
 *   event: streamed events/s (target ≥ 50,000) and log events covered/s.
 */
import { randomBytes } from 'node:crypto';
import { get, request } from 'node:http';
import { type Socket, connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Metric } from './lib/benchmark.js';
import { spawnGateway, spawnServer, waitForSessionState } from './lib/child.js';
import { Samples, round, summarize } from './lib/stats.js';
import { makeTempDir } from './lib/temp.js';
import { rebuildAll, writeHistory } from './rebuild.js';

/** 1,000 stream clients on one address: above the defaults' connection limits (docs/configuration.md). */
const MANY_CLIENTS = { MAX_CONNECTIONS: '4096', MAX_CONNECTIONS_PER_ADDRESS: '4096' };

export const name = 'stream';
export const description =
  'live event stream: 1,000 clients, inbound → every client p99 at 100 events/s, RSS per idle client, resume from 1,000,000 events back';

const CLIENTS = 1_000;
const RATE = 100;
const WARMUP_SECONDS = 2;
const MEASURE_SECONDS = 10;
const KB = 1024;

/** `STREAM_BENCH=fanout` or `STREAM_BENCH=resume` runs one half (the resume half writes a 1M-event log first). */
export async function run(): Promise<Metric[]> {
  const only = process.env.STREAM_BENCH;
  return [...(only === 'resume' ? [] : await fanOut()), ...(only === 'fanout' ? [] : await resume())];
}

interface Client {
  socket: Socket;
  received: number;
}

async function fanOut(): Promise<Metric[]> {
  const gateway = await spawnGateway({
    env: { DEFAULT_ENGINE: 'sandbox', SANDBOX_DELIVERED_DELAY_MS: '0', ...MANY_CLIENTS },
  });
  const clients: Client[] = [];
  try {
    const created = await gateway.adminRequest<{ deviceKey: string }>(
      'POST',
      '/devices',
      { id: 'bench-stream', name: 'stream bench', engine: 'sandbox' },
      201,
    );
    await gateway.adminRequest('POST', '/devices/bench-stream/session/open', undefined);
    await waitForSessionState(gateway, 'bench-stream', 'qr');
    await gateway.adminRequest('POST', '/sandbox/devices/bench-stream/scan', { phone: '4915100007777' }, 202);
    await waitForSessionState(gateway, 'bench-stream', 'online');
    await sleep(500);
    const rssBefore = rssBytes(gateway.pid);

    const sentAt = new Map<number, number>();
    const latencies = new Samples(CLIENTS * RATE * MEASURE_SECONDS);
    let measuring = false;
    for (let i = 0; i < CLIENTS; i++) {
      const admin = i % 2 === 0;
      const path = admin ? '/stream?events=message.received' : '/devices/bench-stream/stream?events=message.received';
      const headers: Record<string, string> = admin
        ? { 'x-admin-key': gateway.adminKey }
        : { 'x-device-key': created.deviceKey };
      clients.push(
        await openClient(gateway.url + path, headers, (n, client) => {
          const sent = sentAt.get(n);
          client.received += 1;
          if (measuring && sent !== undefined && n >= 0) latencies.push(performance.now() - sent);
        }),
      );
    }
    await sleep(2_000);
    const rssIdle = rssBytes(gateway.pid);

    // Warm-up, then the measured run, both at RATE per second on a fixed schedule.
    let sequence = 0;
    const inject = async (seconds: number) => {
      const started = performance.now();
      const total = seconds * RATE;
      const inflight: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        const due = started + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const n = sequence++;
        sentAt.set(n, performance.now());
        inflight.push(
          post(`${gateway.url}/sandbox/devices/bench-stream/inbound`, gateway.adminKey, {
            from: '4915122221111',
            body: `bench-${n}`,
          }),
        );
      }
      await Promise.all(inflight);
    };
    await inject(WARMUP_SECONDS);
    measuring = true;
    const cpuBefore = gateway.cpuSeconds();
    const ownBefore = process.cpuUsage();
    await inject(MEASURE_SECONDS);
    const cpuShare = (gateway.cpuSeconds()! - cpuBefore!) / MEASURE_SECONDS;
    const own = process.cpuUsage(ownBefore);
    const clientsShare = (own.user + own.system) / 1e6 / MEASURE_SECONDS;
    const deadline = Date.now() + 15_000;
    while (clients.some((c) => c.received < sequence) && Date.now() < deadline) await sleep(50);
    measuring = false;
    const missing = clients.reduce((sum, c) => sum + Math.max(0, sequence - c.received), 0);
    const summary = summarize(latencies.values());
    return [
      {
        metric: `clients connected (${CLIENTS / 2} admin /stream, ${CLIENTS / 2} device stream)`,
        value: CLIENTS,
        unit: 'clients',
      },
      {
        metric: `inbound → event on every client, p50 (${RATE}/s, ${MEASURE_SECONDS} s)`,
        value: round(summary.p50, 1),
        unit: 'ms',
      },
      {
        metric: `inbound → event on every client, p99 (${RATE}/s)`,
        value: round(summary.p99, 1),
        unit: 'ms',
        target: { op: '<=', value: 100 },
      },
      { metric: 'inbound → event on every client, max', value: round(summary.max, 1), unit: 'ms' },
      { metric: 'gateway CPU while measuring (1.0 = one core)', value: round(cpuShare, 2), unit: 'cores' },
      {
        metric: 'this process (the 1,000 clients + injection) CPU while measuring',
        value: round(clientsShare, 2),
        unit: 'cores',
      },
      { metric: 'machine load average (1 min) at the end', value: round(loadavg()[0], 1), unit: '' },
      { metric: 'events missing on some client', value: missing, unit: 'events', target: { op: '<=', value: 0 } },
      {
        metric: 'RSS per idle stream client',
        value: round((rssIdle - rssBefore) / CLIENTS / KB, 1),
        unit: 'KB',
        target: { op: '<=', value: 50 },
      },
      { metric: 'gateway RSS with the clients idle', value: round(rssIdle / KB / KB, 1), unit: 'MB' },
    ];
  } finally {
    for (const client of clients) client.socket.destroy();
    await gateway.stop();
  }
}

async function resume(): Promise<Metric[]> {
  const data = makeTempDir('stream-resume');
  try {
    const written = await writeHistory(data.path);
    await rebuildAll(data.path);
    const adminKey = `ak_bench_${randomBytes(16).toString('hex')}`;
    const server = await spawnServer({
      name: 'gateway',
      script: 'src/main.ts',
      env: {
        DATA_DIR: data.path,
        ADMIN_API_KEY: adminKey,
        LOG_LEVEL: 'warn',
        DEFAULT_ENGINE: 'sandbox',
        ...MANY_CLIENTS,
      },
      healthPath: '/health',
      startTimeoutMs: 120_000,
    });
    try {
      // The log's last event is a message.received (each round ends with one per device): positions are 1..written.
      const started = performance.now();
      const { events, lastId } = await readUntil(`${server.url}/stream?after=0`, { 'x-admin-key': adminKey }, written);
      const seconds = (performance.now() - started) / 1000;
      if (lastId !== written) throw new Error(`resume ended at ${lastId}, expected ${written}`);
      return [
        { metric: 'resume from 1,000,000 events back: log events', value: written, unit: 'events' },
        { metric: 'resume: stream events sent (message.*, session.state)', value: events, unit: 'events' },
        {
          metric: 'resume: streamed events/s',
          value: Math.round(events / seconds),
          unit: 'events/s',
          target: { op: '>=', value: 50_000 },
        },
        { metric: 'resume: log events covered/s', value: Math.round(written / seconds), unit: 'events/s' },
        { metric: 'resume: time to the last event', value: round(seconds, 2), unit: 's' },
      ];
    } finally {
      await server.stop();
    }
  } finally {
    data.remove();
  }
}

/**
 * One SSE client on a raw socket (the HTTP client's parser would cost this process more than the gateway
 * spends): it only looks for `"body":"bench-<n>"` in what arrives and calls `onMessage(n)`.
 */
function openClient(
  url: string,
  headers: Record<string, string>,
  onMessage: (n: number, client: Client) => void,
): Promise<Client> {
  const { port, pathname, search } = new URL(url);
  const marker = '"body":"bench-';
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const client: Client = { socket, received: 0 };
    let started = false;
    let carry = '';
    socket.setEncoding('latin1');
    // Before the answer: the open fails. After it: the client is reported as missing events, not a crash.
    socket.on('error', (error) =>
      started ? process.stderr.write(`stream client: ${error.message}\n`) : reject(error),
    );
    socket.write(
      `GET ${pathname}${search} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n`,
    );
    socket.on('data', (chunk: string) => {
      if (!started) {
        if (!chunk.startsWith('HTTP/1.1 200')) return reject(new Error(`${url} answered ${chunk.slice(0, 40)}`));
        started = true;
        resolve(client);
      }
      const text = carry + chunk;
      let from = 0;
      for (;;) {
        const at = text.indexOf(marker, from);
        if (at < 0) {
          carry = text.slice(Math.max(from, text.length - marker.length));
          break;
        }
        let end = at + marker.length;
        while (end < text.length && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
        if (end === text.length) {
          carry = text.slice(at);
          break;
        }
        onMessage(Number(text.slice(at + marker.length, end)), client);
        from = end;
      }
    });
  });
}

/** Reads a stream until the event with id `lastPosition`, counting events without parsing their JSON. */
function readUntil(
  url: string,
  headers: Record<string, string>,
  lastPosition: number,
): Promise<{ events: number; lastId: number }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers, agent: false }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`${url} answered ${response.statusCode}`));
      let events = 0;
      let lastId = 0;
      let tail = '';
      response.setEncoding('utf8');
      response.on('data', (text: string) => {
        const chunk = tail + text;
        let from = 0;
        let at: number;
        while ((at = chunk.indexOf('id: ', from)) >= 0) {
          const lineEnd = chunk.indexOf('\n', at);
          if (lineEnd < 0) break;
          if (at === 0 || chunk[at - 1] === '\n') {
            events += 1;
            lastId = Number(chunk.slice(at + 4, lineEnd));
          }
          from = lineEnd + 1;
        }
        tail = chunk.slice(from);
        if (lastId >= lastPosition) {
          response.destroy();
          resolve({ events, lastId });
        }
      });
      response.on('error', () => undefined);
      response.on('close', () => resolve({ events, lastId }));
    });
    req.once('error', reject);
  });
}

function post(url: string, adminKey: string, body: unknown): Promise<void> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    // A connection each (agent: false): a kept-alive one the server has just closed would answer ECONNRESET.
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          'x-admin-key': adminKey,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          response.statusCode === 202 ? resolve() : reject(new Error(`inbound answered ${response.statusCode}`)),
        );
      },
    );
    req.once('error', reject);
    req.end(payload);
  });
}

function rssBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb[1]) * 1024;
}
