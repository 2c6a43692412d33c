import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_DIR } from './paths.js';
import { freePort } from './ports.js';
import { makeTempDir } from './temp.js';

/** A server running in a child Node process, started by spawnServer / spawnGateway. */
export interface ChildServer {
  name: string;
  pid: number;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** The last ~64 KiB the child wrote to stdout and stderr (for error messages). */
  output(): string;
  /** Bytes written to stdout + stderr so far: a cheap check that a quiet log level really is quiet. */
  outputBytes(): number;
  /** CPU time (user + system) the child has used so far, in seconds; undefined where /proc is unavailable. */
  cpuSeconds(): number | undefined;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. Safe to call twice. */
  stop(): Promise<void>;
}

export interface SpawnServerOptions {
  name: string;
  /** Script path relative to the repository root, run as `node --import tsx <script>`. */
  script: string;
  /** Added to the parent's environment. PORT and HOST are set by spawnServer. */
  env?: Record<string, string>;
  /** Polled until it answers 200. */
  healthPath: string;
  startTimeoutMs?: number;
}

const OUTPUT_KEEP = 64 * 1024;
const STOP_GRACE_MS = 5_000;
/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every mainstream Linux. */
const CLOCK_TICKS = 100;

const running = new Set<ChildProcess>();
let hooked = false;

/** Kills every child still running (SIGKILL; synchronous, so usable from an 'exit' handler). */
export function killAllChildren(): void {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}

function hookProcessExit(): void {
  if (hooked) return;
  hooked = true;
  // Whatever way the bench process ends, no server is left behind holding a port.
  process.once('exit', killAllChildren);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAllChildren();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

/** Starts `node --import tsx <script>` on a free port and waits until healthPath answers 200. */
export async function spawnServer(options: SpawnServerOptions): Promise<ChildServer> {
  hookProcessExit();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...profileArgs(), '--import', 'tsx', options.script], {
    cwd: ROOT_DIR,
    env: { ...process.env, ...options.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  let bytes = 0;
  const collect = (chunk: Buffer) => {
    bytes += chunk.length;
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEEP);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      running.delete(child);
      resolve();
    });
  });
  let exitInfo: string | undefined;
  child.once('exit', (code, signal) => (exitInfo = signal ? `signal ${signal}` : `code ${code}`));
  child.once('error', (error) => (exitInfo = `spawn error: ${error.message}`));

  const server: ChildServer = {
    name: options.name,
    pid: child.pid ?? -1,
    port,
    url,
    output: () => output,
    outputBytes: () => bytes,
    cpuSeconds: () => (child.pid === undefined ? undefined : processCpuSeconds(child.pid)),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
    },
  };

  try {
    await waitForHealth(`${url}${options.healthPath}`, options.startTimeoutMs ?? 30_000, () => exitInfo);
  } catch (error) {
    await server.stop();
    throw new Error(
      `${options.name} did not start: ${(error as Error).message}\n--- ${options.name} output ---\n${output.slice(-4_000)}`,
    );
  }
  return server;
}

/**
 * BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every server child into <dir> when it stops (open it in
 * Chrome's DevTools). Node refuses --cpu-prof in NODE_OPTIONS, so it has to be an argument of the child.
 */
function profileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** Polls until the URL answers 200; fails early when isDead() reports the process has ended. */
export async function waitForHealth(
  url: string,
  timeoutMs: number,
  isDead: () => string | undefined = () => undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    const dead = isDead();
    if (dead) throw new Error(`the process exited (${dead})`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (last: ${last})`);
}

/** A gateway child (`src/main.ts`) with its own temporary DATA_DIR and a known admin key. */
export interface GatewayChild extends ChildServer {
  adminKey: string;
  dataDir: string;
  /** Fetches a gateway path with the admin key and answers the parsed JSON; throws unless the status is expected. */
  adminRequest<T = unknown>(method: string, path: string, body?: unknown, expectStatus?: number): Promise<T>;
}

export interface SpawnGatewayOptions {
  /** Extra environment (e.g. DEFAULT_ENGINE). LOG_LEVEL defaults to warn. */
  env?: Record<string, string>;
  /** How long /health may take to answer (default 30 s; longer under GATEWAY_PROCESSES: every worker loads the code). */
  startTimeoutMs?: number;
}

/** Starts the real gateway as `node --import tsx src/main.ts`; stop() also deletes its DATA_DIR. */
export async function spawnGateway(options: SpawnGatewayOptions = {}): Promise<GatewayChild> {
  const [gateway] = await spawnGateways(1, options);
  return gateway;
}

/**
 * Starts `count` gateway processes on one temporary DATA_DIR with one admin key. More than one: each on a
 * port of its own as a member of one cluster (GATEWAY_CLUSTER=true, GATEWAY_WORKER=1…count; docs/
 * architecture.md, "Several processes"), so that a bench can reach the process that runs a device. The
 * last one stopped deletes the DATA_DIR.
 */
export async function spawnGateways(count: number, options: SpawnGatewayOptions = {}): Promise<GatewayChild[]> {
  const data = makeTempDir('gateway');
  const adminKey = `ak_bench_${randomBytes(16).toString('hex')}`;
  const servers: ChildServer[] = [];
  try {
    for (let worker = 1; worker <= count; worker++) {
      const cluster: Record<string, string> =
        count > 1 ? { GATEWAY_CLUSTER: 'true', GATEWAY_WORKER: String(worker) } : {};
      servers.push(
        await spawnServer({
          name: count > 1 ? `gateway-${worker}` : 'gateway',
          script: 'src/main.ts',
          env: { LOG_LEVEL: 'warn', ...options.env, ...cluster, DATA_DIR: data.path, ADMIN_API_KEY: adminKey },
          healthPath: '/health',
          ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
        }),
      );
    }
  } catch (error) {
    for (const server of servers) await server.stop();
    data.remove();
    throw error;
  }
  let running = servers.length;
  return servers.map((server) => {
    let stopped = false;
    return {
      ...server,
      adminKey,
      dataDir: data.path,
      async adminRequest<T>(method: string, path: string, body?: unknown, expectStatus?: number): Promise<T> {
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers: { 'x-admin-key': adminKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await response.text();
        const ok = expectStatus === undefined ? response.ok : response.status === expectStatus;
        if (!ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
        return (text ? JSON.parse(text) : undefined) as T;
      },
      async stop() {
        try {
          await server.stop();
        } finally {
          if (!stopped && --running === 0) data.remove();
          stopped = true;
        }
      },
    };
  });
}

/** Polls a device's session until it is in `state` (qr, online, …), or fails after `timeoutMs`. */
export async function waitForSessionState(
  gateway: GatewayChild,
  deviceId: string,
  state: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const session = await gateway.adminRequest<{ state: string }>('GET', `/devices/${deviceId}/session/state`);
    if (session.state === state) return;
    await sleep(20);
  }
  throw new Error(`${deviceId} did not reach ${state}`);
}

/** utime + stime of a process from /proc/<pid>/stat, in seconds. */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; the fixed fields start after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** CPU seconds of a process and its children (the gateway's primary and its workers). */
export function treeCpuSeconds(pid: number): number | undefined {
  let total = processCpuSeconds(pid);
  if (total === undefined) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid)
        total += processCpuSeconds(Number(entry)) ?? 0;
    } catch {
      // ended meanwhile
    }
  }
  return total;
}

/** A process's resident memory by kind (bytes): anonymous (heaps, caches), file-backed (mapped files), shared. */
export function processRssParts(pid: number): { anon: number; file: number; shmem: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kB = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    const parts = { anon: kB('RssAnon'), file: kB('RssFile'), shmem: kB('RssShmem') };
    return Object.values(parts).every(Number.isFinite) ? parts : undefined;
  } catch {
    return undefined;
  }
}

/** The resident set of a process from /proc/<pid>/status (VmRSS), in bytes; undefined where /proc is unavailable. */
export function processRssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
