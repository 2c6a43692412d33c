/**
 * Read-only queries of a SQLite file run on threads of their own, so that a heavy read (a chat's page of 50
 * messages) does not hold the event loop while SQLite walks and formats it: the loop goes on parsing and
 * answering other requests meanwhile, and a second core does the read. Each thread opens the file
 * read-only (WAL: it never blocks the writer, nor the writer it) and runs the same query functions the main
 * thread would (`serveReadQueries` in ./reader-thread.ts, started from an entry module of the read model's own).
 * docs/architecture.md, "Reads on threads of their own"; the figures: docs/notes/performance.md.
 *
 * A call is answered by the main thread's own queries (`local`) while no thread is ready (starting, none
 * configured, one that failed), and whenever a thread could not answer it (an error, a thread that ended): the
 * answer is then what a lone thread gives, errors included, so a thread never changes what a request gets.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** Query functions by name; their arguments and answers cross threads (structured clone: plain data only). */
export type ReadQueries = Record<string, (...args: never[]) => unknown>;

/** Main thread → reader thread. */
export interface ReadCall {
  id: number;
  name: string;
  args: unknown[];
}

/** Reader thread → main thread: ready once its connection and queries are made, then one answer per call. */
export type ReadAnswer = { ready: true } | { id: number; value: unknown } | { id: number; failed: string };

/** After a thread fails, calls stay on the main thread this long before threads are started again. */
const RESTART_AFTER_MS = 5_000;

/**
 * Evaluated from a string (CommonJS), so that the entry loads the same way under node (dist/*.js), tsx and
 * vitest (src/*.ts: Node 20 applies no module hooks in worker threads, so TypeScript is loaded through tsx's
 * require, a development dependency).
 */
const BOOT = `
const { workerData } = require('node:worker_threads');
if (workerData.tsx) require(workerData.tsx).require(workerData.entryFile, workerData.entryFile);
else import(workerData.entryUrl);
`;

interface Reader {
  worker: Worker;
  ready: boolean;
  /** Calls sent to it and not answered yet, with what runs them on the main thread should it fail. */
  pending: Map<number, { resolve(value: unknown): void; local(): void }>;
}

export interface ReaderThreadsOptions<Q extends ReadQueries> {
  /** The module each thread runs: it calls serveReadQueries with queries answering as `local` does. */
  entry: URL;
  /** The SQLite file the threads read. */
  file: string;
  /** How many threads (0: every call on the main thread). */
  threads: number;
  /** The same queries on the main thread's connection. */
  local: Q;
  /** Milliseconds, monotonic (tests move it). */
  now?: () => number;
  /** A thread failed or ended unasked (its calls are answered here meanwhile). */
  onFailure?: (error: Error) => void;
}

export class ReaderThreads<Q extends ReadQueries> {
  private readonly readers: Reader[] = [];
  private nextId = 0;
  private failedAt = -Infinity;
  private closed = false;
  private readonly now: () => number;
  /** Calls answered by a thread and on the main thread, since the start. */
  readonly answered = { thread: 0, local: 0 };

  constructor(private readonly options: ReaderThreadsOptions<Q>) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Runs a query on a reader thread (the one with the fewest calls under way), or here when none is ready. */
  run<K extends keyof Q & string>(name: K, ...args: Parameters<Q[K]>): Promise<ReturnType<Q[K]>> {
    const local = () => {
      this.answered.local++;
      return this.options.local[name](...args) as ReturnType<Q[K]>;
    };
    const reader = this.reader();
    if (!reader) return Promise.resolve().then(local);
    const id = this.nextId++;
    return new Promise<ReturnType<Q[K]>>((resolve, reject) => {
      reader.pending.set(id, {
        resolve,
        local: () => {
          try {
            resolve(local());
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        },
      });
      reader.worker.postMessage({ id, name, args } satisfies ReadCall);
    });
  }

  /** Resolves once every thread has its connection open (tests; a call never waits for it). */
  async ready(): Promise<void> {
    this.reader();
    await Promise.all(
      this.readers.map((reader) =>
        reader.ready
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              const done = () => {
                reader.worker.off('message', done);
                reader.worker.off('exit', done);
                resolve();
              };
              reader.worker.on('message', done);
              reader.worker.on('exit', done);
            }),
      ),
    );
  }

  /** How many threads are ready to take calls. */
  get readyThreads(): number {
    return this.readers.filter((reader) => reader.ready).length;
  }

  /** Ends the threads; calls under way are answered on the main thread (its connection is still open). */
  async close(): Promise<void> {
    this.closed = true;
    const readers = this.readers.splice(0);
    for (const reader of readers) this.fail(reader);
    await Promise.all(readers.map((reader) => reader.worker.terminate()));
  }

  /** A ready thread with the fewest calls under way; threads are started at the first call (and again after a failure). */
  private reader(): Reader | undefined {
    if (this.closed || this.options.threads === 0) return undefined;
    if (this.readers.length === 0 && this.now() - this.failedAt >= RESTART_AFTER_MS)
      for (let i = 0; i < this.options.threads; i++) this.readers.push(this.start());
    let best: Reader | undefined;
    for (const reader of this.readers)
      if (reader.ready && (!best || reader.pending.size < best.pending.size)) best = reader;
    return best;
  }

  private start(): Reader {
    const entryUrl = this.options.entry.href;
    const typescript = entryUrl.endsWith('.ts');
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: {
        file: this.options.file,
        entryUrl,
        entryFile: fileURLToPath(entryUrl),
        tsx: typescript ? createRequire(import.meta.url).resolve('tsx/cjs/api') : undefined,
      },
    });
    // Never what keeps a process alive: the server does while there are requests.
    worker.unref();
    const reader: Reader = { worker, ready: false, pending: new Map() };
    worker.on('message', (answer: ReadAnswer) => {
      if ('ready' in answer) {
        reader.ready = true;
        return;
      }
      const call = reader.pending.get(answer.id);
      if (!call) return;
      reader.pending.delete(answer.id);
      // An error is made again on the main thread, as the caller would have met it there (a DomainError's class kept).
      if ('failed' in answer) call.local();
      else {
        this.answered.thread++;
        call.resolve(answer.value);
      }
    });
    worker.on('error', (error) => this.drop(reader, error));
    worker.on('exit', (code) => this.drop(reader, new Error(`a reader thread ended (exit code ${code})`)));
    return reader;
  }

  /** A thread that failed or ended: its calls run here, and no thread takes calls until RESTART_AFTER_MS has passed. */
  private drop(reader: Reader, error: Error): void {
    const index = this.readers.indexOf(reader);
    if (index < 0) return;
    this.options.onFailure?.(error);
    this.readers.splice(index, 1);
    this.fail(reader);
    for (const other of this.readers.splice(0)) {
      this.fail(other);
      void other.worker.terminate();
    }
    this.failedAt = this.now();
  }

  private fail(reader: Reader): void {
    reader.ready = false;
    const calls = [...reader.pending.values()];
    reader.pending.clear();
    for (const call of calls) call.local();
  }
}
