/**
 * `npm run rebuild`: throws every read model away and feeds it again from position 0 of the event log,
 * then reports events/s. Every read-model file of DATA_DIR is rebuilt: `read-models.sqlite`, and with
 * GATEWAY_PROCESSES each worker's `read-models.w<N>.sqlite`, a stale one left behind would otherwise be
 * served as it was. Each is built afresh beside the old one, which it then replaces: a rebuild that fails leaves the
 * old file as it was (src/projections/read-model-file-rebuild.ts). Refused while a gateway uses the same DATA_DIR
 * (src/storage/data-dir-lock.ts).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config.js';
import { withCurrentSchemas } from '../event-schemas.js';
import type { EventStore } from '../eventstore/event-store.js';
import { DataDirInUseError, holdRebuildLock } from '../storage/data-dir-lock.js';
import { usePrivateFileModes } from '../storage/private-files.js';
import { openEventStore } from '../eventstore/open-event-store.js';
import { createLogger } from '../logger.js';
import { READ_MODEL_FILE, readModelFileOf } from '../projections/read-model-db.js';
import { rebuildReadModelFile } from '../projections/read-model-file-rebuild.js';
import { allProjections } from '../read-models.js';

type Config = ReturnType<typeof loadConfig>;
type Logger = ReturnType<typeof createLogger>;

/** `read-models.sqlite` and the workers' `read-models.w<N>.sqlite` (readModelFileOf), not their -wal / -shm. */
const READ_MODEL_FILE_NAME = /^read-models(\.w\d+)?\.sqlite$/;

async function main(): Promise<void> {
  usePrivateFileModes();
  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const lock = holdRebuildLock(config.dataDir);
  try {
    await rebuildAll(config, log);
  } finally {
    lock.release();
  }
}

/**
 * The read-model files present in DATA_DIR, and those the configured processes use (so that a first
 * rebuild makes them): `read-models.sqlite` (a lone process, or the machine projector of GATEWAY_PROCESSES).
 */
function readModelFiles(config: Config): string[] {
  const present = existsSync(config.dataDir)
    ? readdirSync(config.dataDir).filter((name) => READ_MODEL_FILE_NAME.test(name))
    : [];
  // GATEWAY_PROCESSES' workers serve from the machine projector's read-models.sqlite; a process of
  // GATEWAY_CLUSTER started on its own (GATEWAY_WORKER) keeps a file of its own.
  const { worker } = config.cluster;
  const used = worker > 0 ? [readModelFileOf(worker)] : [READ_MODEL_FILE];
  return [...new Set([...used, ...present])].sort();
}

async function rebuildAll(config: Config, log: Logger): Promise<void> {
  const files = readModelFiles(config);
  const store = withCurrentSchemas(await openEventStore(config));
  try {
    // One after the other: each file is one pass over the log, and the passes would only compete for the disk.
    for (const file of files) {
      const { events, seconds } = await rebuild(store, config.dataDir, file, log, config.encryptionKey);
      const rate = seconds > 0 ? Math.round(events / seconds) : events;
      process.stdout.write(
        `rebuilt every read model of ${join(config.dataDir, file)} from ${events} events in ${seconds.toFixed(2)} s (${rate.toLocaleString('en-US')} events/s)\n`,
      );
    }
  } finally {
    await store.close();
  }
}

async function rebuild(
  store: EventStore,
  dataDir: string,
  file: string,
  log: Logger,
  // The read models keep credentials sealed with it (src/read-models.ts).
  encryptionKey: Uint8Array | undefined,
): Promise<{ events: number; seconds: number }> {
  return rebuildReadModelFile(store, dataDir, file, (db) => allProjections(db, store, log, encryptionKey), log);
}

main().catch((error: unknown) => {
  if (error instanceof DataDirInUseError) {
    process.stderr.write(`rebuild refused: ${error.message}\n`);
    process.exit(75); // EX_TEMPFAIL: try again later
  }
  process.stderr.write(`rebuild failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
