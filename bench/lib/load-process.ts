/**
 * A load generator in a process of its own (bench `scale`): one process cannot load eight gateway processes.
 * Forked with IPC; it gets a LoadJob, warms up, says `warm`, waits for `go`, runs the measured window and sends
 * its LoadResult back. Each target URL gets its share of the connections, side by side.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type HttpLoadOptions, type HttpLoadResult, loadHttp } from './http-load.js';
import { percentile } from './stats.js';

export interface LoadJob {
  targets: Array<Pick<HttpLoadOptions, 'url' | 'method' | 'headers' | 'body'>>;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  non2xx: number;
  errors: number;
  /** Milliseconds: the median of the generators' medians, and the worst of their 99th percentiles. */
  p50: number;
  p99: number;
}

const medianOf = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

type Message = { job: LoadJob } | { go: true };

async function child(): Promise<void> {
  const job = await new Promise<LoadJob>((resolve) =>
    process.once('message', (message: Message) => 'job' in message && resolve(message.job)),
  );
  const per = Math.max(1, Math.floor(job.connections / job.targets.length));
  if (job.warmupSeconds > 0)
    await Promise.all(
      job.targets.map((target) =>
        loadHttp({ ...target, connections: per, warmupSeconds: 0, durationSeconds: job.warmupSeconds }),
      ),
    );
  const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
  process.send!({ warm: true });
  await go;
  const results: HttpLoadResult[] = await Promise.all(
    job.targets.map((target) => loadHttp({ ...target, connections: per, durationSeconds: job.durationSeconds })),
  );
  const result: LoadResult = {
    requests: results.reduce((sum, r) => sum + r.requests, 0),
    requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    p50: medianOf(results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
  };
  process.send!({ result }, () => process.exit(0));
}

/**
 * Runs `jobs` in as many processes at once: all warm up, then the measured windows start together; `during`
 * is told when they start and when they all ended (the gateway's CPU is read around them).
 */
export async function loadFromProcesses(
  jobs: LoadJob[],
  during: { started(): void; ended(): void },
): Promise<LoadResult> {
  const script = fileURLToPath(import.meta.url);
  const children = jobs.map((job) => {
    const worker = fork(script, ['--load-process'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
    worker.send({ job });
    return worker;
  });
  try {
    await Promise.all(
      children.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            worker.once('message', () => resolve());
            worker.once('exit', (code) => reject(new Error(`load process ended with ${code} before warming up`)));
          }),
      ),
    );
    const results = children.map(
      (worker) =>
        new Promise<LoadResult>((resolve, reject) => {
          worker.on('message', (message: { result?: LoadResult }) => message.result && resolve(message.result));
          worker.once('exit', (code) => reject(new Error(`load process ended with ${code} without a result`)));
        }),
    );
    during.started();
    for (const worker of children) worker.send({ go: true });
    const done = await Promise.all(results);
    during.ended();
    return {
      requests: done.reduce((sum, r) => sum + r.requests, 0),
      requestsPerSecond: done.reduce((sum, r) => sum + r.requestsPerSecond, 0),
      non2xx: done.reduce((sum, r) => sum + r.non2xx, 0),
      errors: done.reduce((sum, r) => sum + r.errors, 0),
      p50: medianOf(done.map((r) => r.p50)),
      p99: Math.max(...done.map((r) => r.p99)),
    };
  } finally {
    for (const worker of children) if (worker.exitCode === null) worker.kill();
  }
}

if (process.argv.includes('--load-process')) {
  child().catch((error: unknown) => {
    process.stderr.write(`load process failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  });
}
