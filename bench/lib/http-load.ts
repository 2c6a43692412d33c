import autocannon from 'autocannon';
import { Samples, summarize } from './stats.js';

export interface HttpLoadOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** Each request's path, asked before it is sent (varied reads); `url`'s path when left out. */
  nextPath?: () => string;
  connections?: number;
  /** Load before measuring (JIT, caches, keep-alive sockets); its figures are thrown away. */
  warmupSeconds?: number;
  durationSeconds?: number;
  /** CPU seconds used so far by the server under test (ChildServer.cpuSeconds), to report its CPU share. */
  serverCpuSeconds?: () => number | undefined;
}

export interface HttpLoadResult {
  requestsPerSecond: number;
  /** Milliseconds, from autocannon's per-response timings (its own histogram has 1 ms resolution). */
  latency: { mean: number; p50: number; p99: number; max: number };
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSeconds: number;
  /** CPU used by this (load-generating) process during the measured window, % of one core. */
  loadGeneratorCpuPercent: number;
  /** CPU used by the server during the measured window, % of one core; undefined when unknown. */
  serverCpuPercent: number | undefined;
}

/**
 * Loads one URL with autocannon from this process: a warm-up run whose figures are dropped, then the
 * measured run. Keep-alive connections, no pipelining, like ordinary HTTP/1.1 clients.
 */
export async function loadHttp(options: HttpLoadOptions): Promise<HttpLoadResult> {
  const base = {
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections ?? 50,
    pipelining: 1,
    ...(options.nextPath
      ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, path: options.nextPath!() }) }] }
      : {}),
  } satisfies autocannon.Options;
  if ((options.warmupSeconds ?? 0) > 0) await autocannon({ ...base, duration: options.warmupSeconds });

  const latencies = new Samples(64 * 1024);
  const cpuBefore = process.cpuUsage();
  const serverBefore = options.serverCpuSeconds?.();
  const wallBefore = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ ...base, duration: options.durationSeconds ?? 10 }, (error, done) =>
      error ? reject(error) : resolve(done),
    );
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => latencies.push(responseTimeMs));
  });
  const wallSeconds = (performance.now() - wallBefore) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const serverAfter = options.serverCpuSeconds?.();

  return {
    // total / duration rather than the mean of per-second samples: no partial-second bias.
    requestsPerSecond: result.requests.total / result.duration,
    latency: pick(summarize(latencies.values())),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSeconds: result.duration,
    loadGeneratorCpuPercent: ((cpu.user + cpu.system) / 1e6 / wallSeconds) * 100,
    serverCpuPercent:
      serverBefore === undefined || serverAfter === undefined
        ? undefined
        : ((serverAfter - serverBefore) / wallSeconds) * 100,
  };
}

function pick({ mean, p50, p99, max }: { mean: number; p50: number; p99: number; max: number }) {
  return { mean, p50, p99, max };
}
