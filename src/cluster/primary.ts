/**
 * GATEWAY_PROCESSES=N: the primary starts N gateway processes (node:cluster) sharing the port and the store,
 * and serves nothing itself: it makes the admin key before any worker could race for it, runs the machine's
 * one projector (src/cluster/machine-projector.ts: every worker serves from the read models it writes), starts a
 * worker again when one dies, and on SIGTERM stops them all. A worker refused for a wrong setting (exit 78,
 * src/start-failures.ts) is not restarted: every other would fail alike, so all stop, the primary with that code.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { loadOrCreateAdminKey } from '../auth/admin-key.js';
import type { Config } from '../config.js';
import { isHelloMessage } from '../projections/projector-link.js';
import { READ_MODEL_FILE } from '../projections/read-model-db.js';
import { EX_CONFIG } from '../start-failures.js';
import { holdWorkersLock } from '../storage/data-dir-lock.js';
import { type MachineProjector, startMachineProjector } from './machine-projector.js';

const RESTART_DELAY_MS = 1_000;

export async function runPrimary(config: Config, log: Logger): Promise<void> {
  // Held for every worker for the primary's life (they take none): a launch beside a gateway or a rebuild, or a
  // second launch on this DATA_DIR, is refused here at once instead of each worker failing again and again.
  // The kernel lets it go when this process ends, which ends the workers too (node:cluster).
  holdWorkersLock(config.dataDir, [READ_MODEL_FILE]);
  loadOrCreateAdminKey(config.adminApiKey, config.dataDir, log);
  // The workers start meanwhile (loading their code takes a while too); each waits for the projector's first
  // answer, given once it has caught up with the log, before it opens the read models, as a lone gateway's read
  // models are caught up before it listens.
  const running: { projector?: MachineProjector } = {};
  const waiting = new Set<Worker>();
  const workers = new Map<number, Worker>();
  let stopping = false;
  let exitCode = 0;
  const fork = (index: number) => {
    const worker = cluster.fork({ GATEWAY_WORKER: String(index) });
    workers.set(index, worker);
    worker.on('message', (message: unknown) => {
      if (!isHelloMessage(message)) {
        // A worker's key uses, for the projector to record (dropped while it starts: `lastUsedAt` is approximate).
        running.projector?.receive(message);
        return;
      }
      if (!running.projector) waiting.add(worker);
      else if (worker.isConnected()) worker.send(running.projector.status());
    });
    worker.on('exit', (code, signal) => {
      if (workers.get(index) === worker) workers.delete(index);
      if (stopping) {
        if (workers.size === 0) exit();
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
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping the gateway processes');
    if (workers.size === 0) exit();
    for (const worker of workers.values()) worker.process.kill('SIGTERM');
  };
  const started = startMachineProjector(config, log);
  // The projector stops last: the workers' last appends are projected before it goes (or at the next start).
  // One still opening the store or catching up (an EventStoreDB not reachable: it waits for it without end) has
  // nothing to hand over: the primary exits without it, or a SIGTERM would wait as long as the store is away.
  const exit = () => {
    if (!running.projector) {
      log.info('the projector had not caught up with the log; exiting without it (it catches up at the next start)');
      process.exit(exitCode);
    }
    started
      .then((running) => running.stop())
      .then(
        () => process.exit(exitCode),
        (error: unknown) => {
          log.error({ err: error }, 'error while stopping the projector');
          process.exit(exitCode || 1);
        },
      );
  };
  // Before any worker is forked or the start is logged: a SIGTERM from then on stops them all.
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  for (let index = 1; index <= config.cluster.processes; index++) fork(index);
  log.info({ processes: config.cluster.processes, port: config.port }, 'gateway processes starting');
  const projector = await started;
  running.projector = projector;
  projector.onMessage = (message) => {
    for (const worker of workers.values()) if (worker.isConnected()) worker.send(message);
  };
  for (const worker of waiting) if (worker.isConnected()) worker.send(projector.status());
  waiting.clear();
}

export const isPrimaryOf = (config: Config) => config.cluster.processes > 1 && cluster.isPrimary;
