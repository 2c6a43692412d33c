/**
 * projector: how many sends one machine's projector can take (issue 30). With GATEWAY_PROCESSES=N the machine
 * projector is one thread in the node:cluster primary, and a send waits for it once it is 1,000 events behind
 * (docs/architecture.md, "Read your writes"), so in the long run a machine's sends cannot go past this rate whatever
 * N is. A log of sends like bench
 * `scale`'s (32 devices, one `OutboxMessageQueued` per 202) is applied by the real ProjectionRunner in batches of 5,
 * 25, 100 and 400 events (the projector reads the workers' commits every 5 ms: 25 events at 5,000 sends/s), and
 * the process's CPU (its checkpoint thread included) and the bytes it wrote are counted per event. The rate is
 * 1 s ÷ the CPU per event: what one core of this machine projects, not what a loaded machine would.
 * docs/architecture.md, "Several processes".
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { join } from 'node:path';
import { pino } from 'pino';
import { deviceStream } from '../src/devices/device-events.js';
import type { EventStore, StoredEvent, Subscription } from '../src/eventstore/event-store.js';
import { SQLITE_STORE_FILE } from '../src/eventstore/open-event-store.js';
import { withCurrentSchemas } from '../src/event-schemas.js';
import { SqliteEventStore } from '../src/eventstore/sqlite/sqlite-event-store.js';
import { outboxStream } from '../src/messages/message-events.js';
import { ProjectionRunner } from '../src/projections/projection-runner.js';
import { openReadModelDb } from '../src/projections/read-model-db.js';
import { createReadModels } from '../src/read-models.js';
import type { Metric } from './lib/benchmark.js';
import { type LogEvent, writeLogDirect } from './lib/event-log.js';
import { round } from './lib/stats.js';
import { makeTempDir } from './lib/temp.js';

export const name = 'projector';
export const description =
  "The machine projector's rate: a log of 20,000 sends over 32 devices applied by the ProjectionRunner in batches of 5 to 400 events; CPU and bytes written per event";

const DEVICES = 32;
const SENDS = Number(process.env.BENCH_PROJECTOR_SENDS ?? 20_000);
/** BENCH_PROJECTOR_BATCHES (e.g. `25`): only those, for a profile (`node --cpu-prof --import tsx bench/run.ts projector`). */
const BATCHES = (process.env.BENCH_PROJECTOR_BATCHES ?? '5,25,100,400').split(',').map(Number);
/**
 * Read models partitioned by device (docs/architecture.md, "What stops the sends at any N"): this many projector
 * threads, each applying its share of the devices' sends to a file of its own, against one thread doing all
 * (BENCH_PROJECTOR_PARTITIONS; default: the cores, at most 8).
 */
const PARTITIONS = Number(process.env.BENCH_PROJECTOR_PARTITIONS ?? Math.min(8, availableParallelism()));
/** The reads of the workers' commits every 5 ms at about 5,000 sends/s: the events of one read, split over the threads. */
const PARTITIONED_BATCH = 25;

interface Partition {
  index: number;
  count: number;
}

interface Projected {
  cpuMicros: number;
  bytes: number;
  sends: number;
  wallMs: number;
}

export async function run(): Promise<Metric[]> {
  const logDir = makeTempDir('projector-log');
  try {
    await writeLogDirect(logDir.path, sendsLog());
    const metrics: Metric[] = [];
    for (const batch of BATCHES) {
      const { cpuMicros, bytes } = await project(logDir.path, batch);
      metrics.push(
        { metric: `batches of ${batch}: CPU per send projected`, value: round(cpuMicros, 1), unit: 'µs' },
        { metric: `batches of ${batch}: sends one core projects`, value: Math.round(1e6 / cpuMicros), unit: 'sends/s' },
        { metric: `batches of ${batch}: bytes written per send`, value: Math.round(bytes), unit: 'B' },
      );
    }
    const alone = await inThreads(logDir.path, 1);
    const split = await inThreads(logDir.path, PARTITIONS);
    metrics.push(
      {
        metric: `one thread, batches of ${PARTITIONED_BATCH}: sends/s (wall)`,
        value: Math.round(alone),
        unit: 'sends/s',
      },
      {
        metric: `${PARTITIONS} threads, devices split, a file each, batches of ${Math.ceil(PARTITIONED_BATCH / PARTITIONS)}: sends/s (wall)`,
        value: Math.round(split),
        unit: 'sends/s',
      },
      { metric: `${PARTITIONS} threads ÷ one`, value: round(split / alone, 2), unit: 'ratio' },
    );
    return metrics;
  } finally {
    logDir.remove();
  }
}

/** The devices, then SENDS text messages queued round the devices (what POST /send/text appends). */
function* sendsLog(): Generator<LogEvent> {
  const devices = Array.from({ length: DEVICES }, (_, d) => `projector-${d}`);
  for (const deviceId of devices)
    yield {
      streamId: deviceStream(deviceId),
      type: 'DeviceCreated',
      data: { deviceId, name: deviceId, engine: 'sandbox', metadata: {}, keyHash: randomBytes(32).toString('hex') },
    };
  for (let i = 0; i < SENDS; i++) {
    const deviceId = devices[i % DEVICES];
    yield {
      streamId: outboxStream(deviceId),
      type: 'OutboxMessageQueued',
      data: {
        deviceId,
        outboxId: randomUUID(),
        waMessageId: `3EB0${randomBytes(9).toString('hex').toUpperCase()}`,
        to: '4915112345678',
        content: { kind: 'text', text: 'Your order 4711 has shipped and will arrive tomorrow between 9:00 and 12:00.' },
        createdAt: new Date().toISOString(),
        seq: Math.floor(i / DEVICES) + 1,
      },
    };
  }
}

/** Fresh read models over the log: the devices caught up at start, then every send in batches of `batch`. */
async function project(
  logDir: string,
  batch: number,
  partition: Partition = { index: 0, count: 1 },
  /** Resolves when the sends may start (all threads ready); now by default. */
  ready: () => Promise<void> = async () => undefined,
): Promise<Projected> {
  const readModelDir = makeTempDir('projector-read-models');
  const store = withCurrentSchemas(new SqliteEventStore(join(logDir, SQLITE_STORE_FILE)));
  const db = openReadModelDb(readModelDir.path);
  try {
    const events = await store.readAll({ maxCount: DEVICES + SENDS });
    // A partition's devices: every `count`-th (the log sends round the devices in order).
    const sends = events.slice(DEVICES).filter((_, i) => (i % DEVICES) % partition.count === partition.index);
    let started: (() => void) | undefined;
    const go = new Promise<void>((resolve) => (started = resolve));
    const fed = feedInBatches(store, events[DEVICES - 1].position, sends, batch, go);
    const log = pino({ level: 'warn' });
    const runner = new ProjectionRunner(
      fed,
      db,
      createReadModels(db, fed, log, { otherWriters: true }).projections,
      log,
    );
    await runner.start();
    await ready();
    const cpu = process.cpuUsage();
    const written = bytesWritten();
    const began = performance.now();
    started!();
    await runner.waitFor(sends[sends.length - 1].position);
    const wallMs = performance.now() - began;
    const used = process.cpuUsage(cpu);
    const bytes = bytesWritten() - written;
    await runner.stop();
    return {
      cpuMicros: (used.user + used.system) / sends.length,
      bytes: bytes / sends.length,
      sends: sends.length,
      wallMs,
    };
  } finally {
    db.close();
    await store.close();
    readModelDir.remove();
  }
}

/**
 * The store as the runner sees it: the log up to `caughtUp` at start (the devices), then the sends handed to its
 * subscription `batch` events at a time, as the machine projector's tail hands over what the workers committed.
 */
function feedInBatches(
  store: EventStore,
  caughtUp: number,
  sends: readonly StoredEvent[],
  batch: number,
  go: Promise<void>,
): EventStore {
  const fed: EventStore = Object.create(store) as EventStore;
  fed.readAll = async (options) => (await store.readAll(options)).filter((event) => event.position <= caughtUp);
  fed.subscribe = (): Subscription => {
    let closed = false;
    let wake: (() => void) | undefined;
    return {
      close: async () => {
        closed = true;
        wake?.();
      },
      async *[Symbol.asyncIterator]() {
        await go;
        for (let i = 0; i < sends.length && !closed; i += batch) yield sends.slice(i, i + batch);
        // Then nothing more, as a quiet log, until closed.
        await new Promise<void>((resolve) => (closed ? resolve() : (wake = resolve)));
      },
    };
  };
  return fed;
}

/** Bytes this process has handed to write calls so far (the WAL's frames and the checkpoints' copies). */
function bytesWritten(): number {
  const line = readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('wchar:'));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

/**
 * Every send projected by `count` threads at once (this module again, as worker threads), each with a file of its
 * own for its devices, started together once all are ready: sends/s from that start to the last thread's end
 * (wall clock: the process's CPU is the threads' together).
 */
async function inThreads(logDir: string, count: number): Promise<number> {
  const batch = Math.ceil(PARTITIONED_BATCH / count);
  const workers = Array.from(
    { length: count },
    (_, index) =>
      // tsx's loader is registered in this thread only: the worker registers it, then loads this TypeScript file.
      new Worker(
        `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`,
        {
          eval: true,
          workerData: { projectorPartition: { logDir, batch, partition: { index, count } } },
        },
      ),
  );
  const failed = new Promise<never>((_, reject) => {
    for (const worker of workers) {
      worker.once('error', reject);
      worker.once('exit', (code) => code !== 0 && reject(new Error(`a projector thread exited with ${code}`)));
    }
  });
  const message = (worker: Worker, type: string) =>
    new Promise<PartitionMessage>((resolve) => {
      const listen = (m: PartitionMessage) => (m.type === type ? resolve(m) : worker.once('message', listen));
      worker.once('message', listen);
    });
  await Promise.race([Promise.all(workers.map((worker) => message(worker, 'ready'))), failed]);
  const began = performance.now();
  const done = Promise.all(workers.map((worker) => message(worker, 'done')));
  for (const worker of workers) worker.postMessage('go');
  const results = await Promise.race([done, failed]);
  const seconds = (performance.now() - began) / 1000;
  await Promise.all(workers.map((worker) => worker.terminate()));
  return results.reduce((sum, result) => sum + (result.sends ?? 0), 0) / seconds;
}

interface PartitionMessage {
  type: 'ready' | 'done';
  sends?: number;
}

// A worker thread of inThreads: makes its partition's read models, says it is ready, projects on `go`.
const job = isMainThread
  ? undefined
  : (workerData as { projectorPartition?: { logDir: string; batch: number; partition: Partition } }).projectorPartition;
if (job) {
  const ready = () =>
    new Promise<void>((resolve) => {
      parentPort!.once('message', () => resolve());
      parentPort!.postMessage({ type: 'ready' } satisfies PartitionMessage);
    });
  void project(job.logDir, job.batch, job.partition, ready).then((result) =>
    parentPort!.postMessage({ type: 'done', sends: result.sends } satisfies PartitionMessage),
  );
}
