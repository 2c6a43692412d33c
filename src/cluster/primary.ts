/**
 * GATEWAY_PROCESSES=N: the primary starts N gateway processes (node:cluster) sharing the port and the store,
 * and serves nothing itself: it makes the admin key before any worker could race for it, starts a worker
 * again when one dies, and on SIGTERM stops them all. A worker refused for a wrong setting (exit 78,
 * src/start-failures.ts) is not restarted: every other would fail alike, so all stop, the primary with that code.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { loadOrCreateAdminKey } from '../auth/admin-key.js';
import type { Config } from '../config.js';
import { readModelFileOf } from '../projections/read-model-db.js';
import { EX_CONFIG } from '../start-failures.js';
import { holdWorkersLock } from '../storage/data-dir-lock.js';

const RESTART_DELAY_MS = 1_000;

export function runPrimary(config: Config, log: Logger): void {
  // Held for every worker for the primary's life (they take none): a launch beside a gateway or a rebuild, or a
  // second launch on this DATA_DIR, is refused here at once instead of each worker failing again and again.
  // The kernel lets it go when this process ends, which ends the workers too (node:cluster).
  const workerFiles = Array.from({ length: config.cluster.processes }, (_, index) => readModelFileOf(index + 1));
  holdWorkersLock(config.dataDir, workerFiles);
  loadOrCreateAdminKey(config.adminApiKey, config.dataDir, log);
  const workers = new Map<number, Worker>();
  let stopping = false;
  let exitCode = 0;
  const fork = (index: number) => {
    const worker = cluster.fork({ GATEWAY_WORKER: String(index) });
    workers.set(index, worker);
    worker.on('exit', (code, signal) => {
      if (workers.get(index) === worker) workers.delete(index);
      if (stopping) {
        if (workers.size === 0) process.exit(exitCode);
        return;
      }
      if (code === EX_CONFIG) {
        log.error(
          { worker: index, code },
          'a gateway process could not start for a wrong setting (its message says which); stopping them all',
        );
        exitCode = EX_CONFIG;
        stop('a wrong setting');
        return;
      }
      log.error({ worker: index, code, signal }, 'gateway process ended; starting it again');
      // Referenced: with every worker gone, this timer is what keeps the primary alive to start them again.
      setTimeout(() => !stopping && fork(index), RESTART_DELAY_MS);
    });
  };
  for (let index = 1; index <= config.cluster.processes; index++) fork(index);
  log.info({ processes: config.cluster.processes, port: config.port }, 'gateway processes starting');
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping the gateway processes');
    if (workers.size === 0) process.exit(exitCode);
    for (const worker of workers.values()) worker.process.kill('SIGTERM');
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

export const isPrimaryOf = (config: Config) => config.cluster.processes > 1 && cluster.isPrimary;
