/**
 * inbound-media: received images of 1 MiB on a sandbox device (POST /sandbox/devices/:id/inbound with
 * base64 media), 50 per second for 20 s, on the gateway in a child process. Each is downloaded (streamed to
 * disk) before it is recorded, then delivered as a `message.received` webhook to a receiver in this
 * process, which fetches its `media.url` to prove it works.
 *
 * - arrival → webhook: from the moment the inbound request is sent until the webhook is received (p99);
 * - arrival → 202 (the message recorded), to tell the inbound path from the webhook delivery;
 * - RSS growth of the gateway while the first 200 MiB are downloaded (the target's figure), and over the whole
 *   run (1,000 MiB of media in total);
 * - the gateway's CPU time per message;
 * - every webhook's media URL answered 200 with 1 MiB whose SHA-256 matches the event's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metric } from './lib/benchmark.js';
import { type GatewayChild, spawnGateway, waitForSessionState } from './lib/child.js';
import { percentile, round } from './lib/stats.js';

export const name = 'inbound-media';
export const description =
  'sandbox inbound 1 MiB images at 50/s for 20 s → downloaded to disk before the webhook; arrival→webhook p99, gateway RSS growth, media URLs checked';

const RATE_PER_SECOND = Number(process.env.BENCH_MEDIA_RATE ?? 50);
const DURATION_SECONDS = Number(process.env.BENCH_MEDIA_SECONDS ?? 20);
const SIZE = 1024 * 1024;
/** The RSS target is for 200 MiB of media downloaded (1 MiB each). */
const FIRST_MESSAGES = 200;
const DEVICE = 'bench-media';

export async function run(): Promise<Metric[]> {
  const image = randomBytes(SIZE);
  // The body is encoded once: each request writes the same bytes around its own tag (this process shares
  // the machine's cores with the gateway, and building and encoding 1.4 MB per request cost it as much).
  const head = Buffer.from('{"from":"4915100000003","type":"image","body":"');
  const tail = Buffer.from(`","media":{"base64":"${image.toString('base64')}","mimetype":"image/jpeg"}}`);
  const body = (tag: string): Buffer[] => [head, Buffer.from(tag), tail];
  const expectedSha = createHash('sha256').update(image).digest('hex');

  const arrived = new Map<string, number>();
  const latencies: number[] = [];
  /** Arrival → the inbound request's 202 (the message recorded): the rest of arrival → webhook is the delivery. */
  const answered: number[] = [];
  const checks: Array<Promise<boolean>> = [];
  // eslint-disable-next-line prefer-const -- the receiver above reads it; it is set once the receiver listens
  let gateway: GatewayChild | undefined;
  let deviceKey = '';
  const receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = performance.now();
      res.writeHead(200).end();
      const envelope = JSON.parse(Buffer.concat(chunks).toString()) as {
        data: { body: string; media?: { url?: string; sha256?: string } };
      };
      const tag = envelope.data.body;
      const started = arrived.get(tag);
      if (started !== undefined) latencies.push(received - started);
      checks.push(
        checkMedia(gateway!, deviceKey, envelope.data.media?.url, envelope.data.media?.sha256 === expectedSha),
      );
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  gateway = await spawnGateway({
    env: { DEFAULT_ENGINE: 'sandbox', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_HOST_RATE_PER_SECOND: '10000' },
  });
  try {
    deviceKey = await prepareDevice(gateway, receiverUrl);
    // Warm up (JIT, first file in the directory), then settle.
    for (let i = 0; i < 5; i++) await inbound(gateway, body(`warm${i}`));
    await sleep(1_000);
    const rssBefore = rssMb(gateway.pid);
    let peakRss = rssBefore;
    /** The peak while the first 200 MiB are downloaded (the figure; the whole run downloads 1,000 MiB). */
    let peakFirst = rssBefore;
    const sample = () => {
      const rss = rssMb(gateway.pid);
      peakRss = Math.max(peakRss, rss);
      if (latencies.length < FIRST_MESSAGES) peakFirst = Math.max(peakFirst, rss);
    };
    const cpuBefore = gateway.cpuSeconds() ?? 0;
    const benchCpuBefore = process.cpuUsage();
    const mainBefore = mainThreadCpuSeconds(gateway.pid);

    const total = RATE_PER_SECOND * DURATION_SECONDS;
    const sends: Array<Promise<void>> = [];
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / RATE_PER_SECOND;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const tag = `m${i}`;
      const json = body(tag);
      arrived.set(tag, performance.now());
      const sent = inbound(gateway, json).then(() => void answered.push(performance.now() - arrived.get(tag)!));
      sent.catch(() => undefined); // reported by Promise.all below, not as an unhandled rejection meanwhile
      sends.push(sent);
      if (i % 5 === 0) sample();
    }
    await Promise.all(sends);
    const deadline = Date.now() + 60_000;
    while (latencies.length < total && Date.now() < deadline) {
      sample();
      await sleep(50);
    }
    const rssAfter = rssMb(gateway.pid);
    // CPU time (user + system, every thread) the gateway spent per message: its body, download, record,
    // webhook and the media check. The machine's other load changes it far less than the latencies.
    const cpuMs = (((gateway.cpuSeconds() ?? 0) - cpuBefore) * 1000) / total;
    const mainMs = ((mainThreadCpuSeconds(gateway.pid) - mainBefore) * 1000) / total;
    const benchCpu = process.cpuUsage(benchCpuBefore);
    const benchCpuMs = (benchCpu.user + benchCpu.system) / 1000 / total;
    const working = (await Promise.all(checks)).filter(Boolean).length;
    latencies.sort((a, b) => a - b);
    answered.sort((a, b) => a - b);
    return [
      { metric: 'webhooks received', value: latencies.length, unit: `of ${total}`, target: { op: '>=', value: total } },
      { metric: 'arrival → webhook p50', value: round(percentile(latencies, 50), 1), unit: 'ms' },
      {
        metric: 'arrival → webhook p99',
        value: round(percentile(latencies, 99), 1),
        unit: 'ms',
        target: { op: '<=', value: 150 },
      },
      { metric: 'arrival → webhook max', value: round(latencies.at(-1) ?? 0, 1), unit: 'ms' },
      { metric: 'arrival → 202 (recorded) p50', value: round(percentile(answered, 50), 1), unit: 'ms' },
      { metric: 'arrival → 202 (recorded) p99', value: round(percentile(answered, 99), 1), unit: 'ms' },
      { metric: 'gateway CPU time per message', value: round(cpuMs, 1), unit: 'ms' },
      { metric: 'of which the main thread', value: round(mainMs, 1), unit: 'ms' },
      { metric: 'bench client CPU time per message (same cores)', value: round(benchCpuMs, 1), unit: 'ms' },
      { metric: 'media downloaded in total', value: round((total * SIZE) / 2 ** 20, 0), unit: 'MiB' },
      {
        metric: `gateway RSS growth over the first ${FIRST_MESSAGES} MiB (peak − before)`,
        value: round(peakFirst - rssBefore, 1),
        unit: 'MB',
        target: { op: '<=', value: 50 },
      },
      {
        metric: 'gateway RSS growth over the whole run (peak − before)',
        value: round(peakRss - rssBefore, 1),
        unit: 'MB',
      },
      { metric: 'gateway RSS growth (after − before)', value: round(rssAfter - rssBefore, 1), unit: 'MB' },
      { metric: 'inbound answered 503 and sent again (Retry-After)', value: deferred, unit: 'requests' },
      { metric: 'inbound whose connection was cut, sent again', value: cut, unit: 'requests' },
      {
        metric: 'media URLs answering the right bytes',
        value: working,
        unit: `of ${checks.length}`,
        target: { op: '>=', value: total },
      },
    ];
  } finally {
    await gateway.stop();
    agent.destroy();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/** Inbound requests answered 503 (too many large bodies at once) and sent again after Retry-After, as a client would. */
let deferred = 0;

/** Requests whose connection failed (a refused body can end its connection before it is all sent), sent again. */
let cut = 0;

/** Keep-alive connections, as many as requests in flight (node:http: fetch costs this process far more CPU per request). */
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

async function inbound(gateway: GatewayChild, parts: Buffer[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let answer: { status: number; text: string; retryAfter: string | undefined };
    try {
      answer = await post(`${gateway.url}/sandbox/devices/${DEVICE}/inbound`, gateway.adminKey, parts);
    } catch (error) {
      if (attempt >= 20)
        throw new Error(
          `inbound failed: ${(error as Error).message}; gateway output: ${gateway.output().slice(-3000)}`,
        );
      cut += 1;
      await sleep(200);
      continue;
    }
    if (answer.status === 202) return;
    if (answer.status !== 503) throw new Error(`inbound answered ${answer.status}: ${answer.text}`);
    deferred += 1;
    await sleep(Number(answer.retryAfter ?? 1) * 1000);
  }
}

function post(
  url: string,
  adminKey: string,
  parts: Buffer[],
): Promise<{ status: number; text: string; retryAfter: string | undefined }> {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'x-admin-key': adminKey, 'content-type': 'application/json', 'content-length': length },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            text: Buffer.concat(chunks).toString(),
            retryAfter: response.headers['retry-after'],
          }),
        );
        response.once('error', reject);
      },
    );
    req.once('error', reject);
    for (const part of parts) req.write(part);
    req.end();
  });
}

/** The URL answers the whole image (its length counted; the hash is the event's, checked against the image's). */
async function checkMedia(
  gateway: GatewayChild,
  key: string,
  url: string | undefined,
  shaMatches: boolean,
): Promise<boolean> {
  if (!url || !shaMatches) return false;
  try {
    const { status, received } = await new Promise<{ status: number; received: number }>((resolve, reject) => {
      const req = request(`${gateway.url}${url}`, { agent, headers: { 'x-device-key': key } }, (response) => {
        let received = 0;
        response.on('data', (chunk: Buffer) => void (received += chunk.length));
        response.once('end', () => resolve({ status: response.statusCode ?? 0, received }));
        response.once('error', reject);
      });
      req.once('error', reject);
      req.end();
    });
    return status === 200 && received === SIZE;
  } catch {
    return false; // counted as not working (a rejection left pending here would end the bench as unhandled)
  }
}

async function prepareDevice(gateway: GatewayChild, receiverUrl: string): Promise<string> {
  const { deviceKey } = await gateway.adminRequest<{ deviceKey: string }>(
    'POST',
    '/devices',
    { id: DEVICE, name: DEVICE, engine: 'sandbox' },
    201,
  );
  await gateway.adminRequest('POST', `/devices/${DEVICE}/session/open`);
  await waitForSessionState(gateway, DEVICE, 'qr');
  const scanned = await fetch(`${gateway.url}/sandbox/devices/${DEVICE}/scan`, {
    method: 'POST',
    headers: { 'x-admin-key': gateway.adminKey, 'content-type': 'application/json' },
    body: JSON.stringify({ phone: '4915100000001' }),
  });
  await scanned.arrayBuffer();
  await waitForSessionState(gateway, DEVICE, 'online');
  await gateway.adminRequest(
    'PUT',
    `/devices/${DEVICE}/hooks`,
    { url: receiverUrl, events: ['message.received'] },
    200,
  );
  return deviceKey;
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** CPU time (user + system) of the process's main thread alone (its libuv pool and V8's threads left out). */
function mainThreadCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
