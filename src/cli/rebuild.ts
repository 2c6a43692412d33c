/**
 * `npm run rebuild`: throws every read model away and feeds it again from position 0 of the event log,
 * then reports events/s. Refused while a gateway uses the same DATA_DIR (src/storage/data-dir-lock.ts).
 */
import { loadConfig } from '../config.js';
import { withCurrentSchemas } from '../event-schemas.js';
import { DataDirInUseError, holdRebuildLock } from '../storage/data-dir-lock.js';
import { usePrivateFileModes } from '../storage/private-files.js';
import { openEventStore } from '../eventstore/open-event-store.js';
import { createLogger } from '../logger.js';
import { ProjectionRunner } from '../projections/projection-runner.js';
import { openReadModelDb } from '../projections/read-model-db.js';
import { allProjections } from '../read-models.js';

async function main(): Promise<void> {
  usePrivateFileModes();
  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const lock = holdRebuildLock(config.dataDir);
  try {
    await rebuild(config, log);
  } finally {
    lock.release();
  }
}

async function rebuild(config: ReturnType<typeof loadConfig>, log: ReturnType<typeof createLogger>): Promise<void> {
  const store = withCurrentSchemas(await openEventStore(config));
  const db = openReadModelDb(config.dataDir);
  const runner = new ProjectionRunner(store, db, allProjections(db, store, log), log);
  try {
    const { events, seconds } = await runner.rebuild();
    await runner.stop();
    const rate = seconds > 0 ? Math.round(events / seconds) : events;
    process.stdout.write(`rebuilt every read model from ${events} events in ${seconds.toFixed(2)} s (${rate.toLocaleString('en-US')} events/s)\n`);
  } finally {
    await store.close();
    db.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof DataDirInUseError) {
    process.stderr.write(`rebuild refused: ${error.message}\n`);
    process.exit(75); // EX_TEMPFAIL: try again later
  }
  process.stderr.write(`rebuild failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
