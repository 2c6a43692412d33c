/**
 * `npm run rebuild`: throws every read model away and feeds it again from position 0 of the event log,
 * then reports events/s. Stop the gateway first: read models have one writer.
 */
import { loadConfig } from '../config.js';
import { openEventStore } from '../eventstore/open-event-store.js';
import { createLogger } from '../logger.js';
import { ProjectionRunner } from '../projections/projection-runner.js';
import { openReadModelDb } from '../projections/read-model-db.js';
import { createReadModels, webhookProjections } from '../read-models.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const store = await openEventStore(config);
  const db = openReadModelDb(config.dataDir);
  const runners = [
    ['read models', new ProjectionRunner(store, db, createReadModels(db, store, log).projections, log)],
    ['webhook deliveries', new ProjectionRunner(store, db, webhookProjections(db), log)],
  ] as const;
  try {
    for (const [name, runner] of runners) {
      const { events, seconds } = await runner.rebuild();
      await runner.stop();
      const rate = seconds > 0 ? Math.round(events / seconds) : events;
      process.stdout.write(`${name}: ${events} events in ${seconds.toFixed(2)} s (${rate.toLocaleString('en-US')} events/s)\n`);
    }
  } finally {
    await store.close();
    db.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`rebuild failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
