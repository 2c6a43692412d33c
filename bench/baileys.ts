/**
 * baileys: memory per connected Baileys session. N devices (default 20, BENCH_BAILEYS_SESSIONS) connect
 * through the Baileys engine to a local WhatsApp server (crabline), each sends one text and receives one,
 * and the RSS the sessions add is divided by N. Peer gateways report 80–200 MB per session; target ≤ 25 MB.
 *
 * The sessions run in a child process (this file, started with --child) so that the figure holds the
 * engine and Baileys only: crabline stays in the bench process, and the child measures its own RSS after
 * a full GC, once before the first connect (Baileys loaded, store open) and once with every session online.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Metric } from './lib/benchmark.js';
import { ROOT_DIR } from './lib/paths.js';
import { round } from './lib/stats.js';
import { makeTempDir } from './lib/temp.js';

export const name = 'baileys';
export const description =
  'Baileys engine: N sessions connected to a local WhatsApp server (crabline); RSS per connected session';

const SESSIONS = Number(process.env.BENCH_BAILEYS_SESSIONS ?? 20);
const CHILD_TIMEOUT_MS = 120_000;
const MB = 2 ** 20;

/** What the child reports on its last stdout line. */
interface ChildReport {
  sessions: number;
  baseline: MemoryFigures;
  online: MemoryFigures;
  afterTraffic: MemoryFigures;
  secondsToAllOnline: number;
  inboundReceived: number;
}

interface MemoryFigures {
  rss: number;
  heapUsed: number;
  external: number;
}

export async function run(): Promise<Metric[]> {
  const { startWhatsAppServer } = await import('@openclaw/crabline');
  const dir = makeTempDir('baileys');
  const server = await startWhatsAppServer({ recorderPath: join(dir.path, 'crabline.jsonl'), host: '127.0.0.1' });
  try {
    const report = await runChild({
      BENCH_BAILEYS_CHILD_DIR: dir.path,
      BENCH_BAILEYS_SOCKET_URL: server.manifest.endpoints.baileysWebSocketUrl,
      BENCH_BAILEYS_SELF_JID: server.manifest.selfJid,
      BENCH_BAILEYS_INBOUND_URL: server.manifest.endpoints.adminInboundUrl,
      BENCH_BAILEYS_ADMIN_TOKEN: server.manifest.adminToken,
      BENCH_BAILEYS_SESSIONS: String(SESSIONS),
    });
    const n = report.sessions;
    const perSession = (after: MemoryFigures, key: keyof MemoryFigures) =>
      round((after[key] - report.baseline[key]) / n / MB, 2);
    return [
      {
        metric: `RSS per connected session (${n} sessions, after 1 text out + 1 in each)`,
        value: perSession(report.afterTraffic, 'rss'),
        unit: 'MB',
        target: { op: '<=', value: 25 },
      },
      { metric: 'RSS per connected session, idle', value: perSession(report.online, 'rss'), unit: 'MB' },
      { metric: 'JS heap per connected session', value: perSession(report.afterTraffic, 'heapUsed'), unit: 'MB' },
      {
        metric: 'RSS of the process, Baileys loaded, no session',
        value: round(report.baseline.rss / MB, 1),
        unit: 'MB',
      },
      { metric: `RSS of the process with ${n} sessions`, value: round(report.afterTraffic.rss / MB, 1), unit: 'MB' },
      { metric: `time until all ${n} sessions are online`, value: round(report.secondsToAllOnline, 2), unit: 's' },
      { metric: 'inbound texts reported (1 per session expected)', value: report.inboundReceived, unit: 'messages' },
    ];
  } finally {
    await server.close().catch(() => undefined);
    dir.remove();
  }
}

function runChild(env: Record<string, string>): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/baileys.ts', '--child'], {
      cwd: ROOT_DIR,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-8_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) return resolve(JSON.parse(last) as ChildReport);
      reject(
        new Error(
          `the Baileys sessions child ended with ${signal ?? `code ${code}`}\n${stderr}\n${stdout.slice(-2_000)}`,
        ),
      );
    });
  });
}

// ---- the child: N sessions through the engine, measuring itself ----

async function child(): Promise<void> {
  const env = (key: string) => {
    const value = process.env[key];
    if (!value) throw new Error(`${key} is not set`);
    return value;
  };
  const sessions = Number(env('BENCH_BAILEYS_SESSIONS'));
  const selfJid = env('BENCH_BAILEYS_SELF_JID');
  const [
    { initAuthCreds },
    { SqliteEventStore },
    { AuthRecords },
    { createBaileysEngine },
    { newWaMessageId },
    { pino },
  ] = await Promise.all([
    import('baileys'),
    import('../src/eventstore/sqlite/sqlite-event-store.js'),
    import('../src/engines/baileys/auth/auth-records.js'),
    import('../src/engines/baileys/baileys-engine.js'),
    import('../src/messages/message-id.js'),
    import('pino'),
  ]);
  const store = new SqliteEventStore(join(env('BENCH_BAILEYS_CHILD_DIR'), 'events.sqlite'));
  const deviceIds = Array.from({ length: sessions }, (_, i) => `bench-${i}`);
  // What each device holds after its QR scan (crabline does not pair): credentials linked to its account.
  for (const deviceId of deviceIds) {
    await new AuthRecords(store, deviceId, undefined).write('creds', {
      ...initAuthCreds(),
      me: { id: selfJid, name: 'Bench' },
    });
  }
  const engine = createBaileysEngine({
    store,
    socketUrl: env('BENCH_BAILEYS_SOCKET_URL'),
    logger: pino({ level: 'silent' }),
    verifyRecipients: false, // crabline answers no onWhatsApp query
  });
  const baseline = measure();

  let online = 0;
  let inbound = 0;
  let allOnline!: () => void;
  const everyoneOnline = new Promise<void>((resolve) => (allOnline = resolve));
  const started = performance.now();
  const connections = await Promise.all(
    deviceIds.map((deviceId) =>
      engine.connect(deviceId, {
        qr: () => undefined,
        online: () => {
          if (++online === sessions) allOnline();
        },
        disconnected: (kind, detail) => process.stderr.write(`${deviceId} disconnected: ${kind} ${detail}\n`),
        inbound: async () => void inbound++,
        receipt: async () => undefined,
        contacts: async () => undefined,
      }),
    ),
  );
  await withTimeout(everyoneOnline, 60_000, () => `only ${online} of ${sessions} sessions came online`);
  const secondsToAllOnline = (performance.now() - started) / 1000;
  const idle = measure();

  // A little traffic, as a working session has: one text out from each, one text in to each.
  await Promise.all(
    connections.map((c, i) =>
      c.send({
        waMessageId: newWaMessageId(selfJid),
        to: `1555100${String(i).padStart(4, '0')}`,
        content: { kind: 'text', text: `bench ${i}` },
      }),
    ),
  );
  const response = await fetch(env('BENCH_BAILEYS_INBOUND_URL'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-crabline-admin-token': env('BENCH_BAILEYS_ADMIN_TOKEN') },
    body: JSON.stringify({
      chatJid: '15557654321@s.whatsapp.net',
      senderJid: '15557654321@s.whatsapp.net',
      text: 'hello, bench',
    }),
  });
  if (!response.ok) throw new Error(`crabline refused the inbound text: ${response.status} ${await response.text()}`);
  await withTimeout(
    (async () => {
      while (inbound < sessions) await new Promise((resolve) => setTimeout(resolve, 20));
    })(),
    30_000,
    () => `only ${inbound} of ${sessions} sessions received the inbound text`,
  );
  const afterTraffic = measure();

  await Promise.all(connections.map((c) => c.close()));
  await engine.close();
  await store.close();
  const report: ChildReport = {
    sessions,
    baseline,
    online: idle,
    afterTraffic,
    secondsToAllOnline,
    inboundReceived: inbound,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

function measure(): MemoryFigures {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message())), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

if (process.argv.includes('--child') && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  child().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
