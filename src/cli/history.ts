/**
 * `npm run history -- <deviceId> [--json]`: prints a device's timeline from the event store (SQLite or
 * EventStoreDB, per the usual settings), every event whose data names the device, in log order, with
 * secrets redacted. It only reads, so it is safe beside a running gateway; a DATA_DIR without a store is
 * refused, never created.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config.js';
import { withCurrentSchemas } from '../event-schemas.js';
import { SQLITE_STORE_FILE, openEventStore } from '../eventstore/open-event-store.js';
import { redactSecrets } from '../history/redact.js';

const PAGE = 5_000;

/** DATA_DIR holds no event store: nothing to show, and nothing is made. */
class NoEventStoreError extends Error {}

/** The store of the settings; an embedded one must exist already (opening it would make an empty one). */
async function openStore(config: ReturnType<typeof loadConfig>) {
  const file = join(config.dataDir, SQLITE_STORE_FILE);
  if (!config.eventStoreUrl && !existsSync(file))
    throw new NoEventStoreError(`no event store at ${file}: is DATA_DIR the gateway's data directory?`);
  return withCurrentSchemas(await openEventStore(config, { readOnly: true }));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const deviceId = args.find((a) => !a.startsWith('--'));
  const asJson = args.includes('--json');
  if (!deviceId) {
    process.stderr.write('usage: npm run history -- <deviceId> [--json]\n');
    process.exit(2);
  }
  const store = await openStore(loadConfig());
  let after = 0;
  let count = 0;
  try {
    for (;;) {
      const page = await store.readAll({ after, maxCount: PAGE });
      if (page.length === 0) break;
      after = page[page.length - 1].position;
      for (const event of page) {
        if ((event.data as { deviceId?: unknown } | null)?.deviceId !== deviceId) continue;
        count++;
        const data = redactSecrets(event.data) as Record<string, unknown>;
        const { deviceId: _, ...rest } = data;
        const line = asJson
          ? JSON.stringify({
              position: event.position,
              stream: event.streamId,
              revision: event.revision,
              type: event.type,
              createdAt: event.createdAt,
              data,
            })
          : `${event.createdAt.toISOString()}  #${event.position}  ${event.streamId}@${event.revision}  ${event.type}  ${JSON.stringify(rest)}`;
        process.stdout.write(`${line}\n`);
      }
    }
  } finally {
    await store.close();
  }
  if (!asJson) process.stderr.write(`${count} events of device ${deviceId}\n`);
}

main().catch((error: unknown) => {
  if (error instanceof NoEventStoreError) {
    process.stderr.write(`history refused: ${error.message}\n`);
    process.exit(66); // EX_NOINPUT
  }
  process.stderr.write(`history failed: ${(error as Error).message}\n`);
  process.exit(1);
});
