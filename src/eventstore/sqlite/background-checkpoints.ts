/**
 * WAL checkpoints off the JavaScript thread. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses its threshold and blocks every request while it copies and fsyncs. Here one worker thread, with a
 * connection of its own to each registered file, runs small, frequent PASSIVE checkpoints (never blocking a
 * writer or reader; a busy file is tried next round), and the writers keep an automatic checkpoint only as a
 * fallback. docs/architecture.md, "When an append is durable"; the intervals' figures: docs/notes/performance.md.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Rounds come every ACTIVE_EVERY_MS while a WAL grows, and back off to IDLE_EVERY_MS when none does (no
 * longer, so that the first checkpoint of a burst is still small): each ends with an fsync of the database
 * file, and a large one makes the WAL's next flushes wait behind it.
 */
const ACTIVE_EVERY_MS = 20;
const IDLE_EVERY_MS = 200;
/**
 * 64 MiB of 4 KiB pages. If the worker never finds the WAL quiet enough to finish (a checkpoint copies up to
 * the frame it started at), the writer checkpoints at this size, cheaply: the worker has copied nearly every page.
 */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 16_384;

/** Evaluated from a string (CommonJS), so that it runs the same under node, tsx and vitest. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const open = new Map();
// A file added twice (two stores on one file in one process) keeps one connection until both are removed.
const added = new Map();
parentPort.on('message', (message) => {
  if (message.add !== undefined) {
    added.set(message.add, (added.get(message.add) ?? 0) + 1);
    if (open.has(message.add)) return;
    try {
      const db = new Database(message.add, { fileMustExist: true });
      db.pragma('busy_timeout = 0');
      open.set(message.add, db);
    } catch {
      // The file is gone already: its writer checkpoints it as SQLite always did.
    }
  } else if (message.remove !== undefined) {
    const left = (added.get(message.remove) ?? 1) - 1;
    if (left > 0) added.set(message.remove, left);
    else {
      added.delete(message.remove);
      const db = open.get(message.remove);
      open.delete(message.remove);
      try { db?.close(); } catch {}
    }
    parentPort.postMessage({ removed: message.remove, id: message.id });
  }
});
// Each file's WAL as the last round found it ("log frames:checkpointed frames"): a change means writes.
const seen = new Map();
let pause = workerData.activeMs;
const round = () => {
  let active = false;
  for (const [file, db] of open) {
    try {
      const [state] = db.pragma('wal_checkpoint(PASSIVE)');
      const now = state.log + ':' + state.checkpointed;
      if (seen.get(file) !== now) active = true;
      seen.set(file, now);
    } catch {}
  }
  for (const file of seen.keys()) if (!open.has(file)) seen.delete(file);
  pause = active ? workerData.activeMs : Math.min(workerData.idleMs, pause * 2);
  setTimeout(round, pause);
};
setTimeout(round, pause);
`;

interface Registration {
  /** Stops checkpointing the file; resolves once the worker's connection to it is closed. */
  release(): Promise<void>;
}

class BackgroundCheckpoints {
  private worker: Worker | undefined;
  private files = 0;
  private nextId = 0;
  private readonly waiting = new Map<number, () => void>();

  add(file: string): Registration {
    const worker = (this.worker ??= this.start());
    this.files += 1;
    worker.postMessage({ add: file });
    let released: Promise<void> | undefined;
    return {
      release: () =>
        (released ??= new Promise<void>((resolve) => {
          if (this.worker !== worker) return resolve(); // the thread failed: nothing of it is left to close
          const id = this.nextId++;
          // Held while an answer is awaited: a process whose last work is closing a store waits for it.
          worker.ref();
          this.waiting.set(id, () => {
            if (this.waiting.size === 0) worker.unref();
            resolve();
            this.files -= 1;
            // The last file gone: the thread goes too (tests open and close hundreds of stores).
            if (this.files === 0 && this.worker === worker) {
              this.worker = undefined;
              void worker.terminate();
            }
          });
          worker.postMessage({ remove: file, id });
        })),
    };
  }

  private start(): Worker {
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { sqlite, activeMs: ACTIVE_EVERY_MS, idleMs: IDLE_EVERY_MS },
    });
    // Never what keeps a process alive; its messages answer releases only.
    worker.unref();
    worker.on('message', (message: { id: number }) => {
      const answer = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      answer?.();
    });
    worker.on('error', () => {
      // Without the worker, the writers' fallback checkpoint still keeps the WAL bounded.
      if (this.worker === worker) this.worker = undefined;
      for (const answer of this.waiting.values()) answer();
      this.waiting.clear();
    });
    return worker;
  }
}

/** The process's one checkpointing thread, shared by every SQLite file it writes. */
export const backgroundCheckpoints = new BackgroundCheckpoints();
