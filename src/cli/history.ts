/**
 * `npm run history -- <deviceId> [--json]`: prints a device's timeline from the event store (SQLite or
 * EventStoreDB, per the usual settings), every event whose data names the device, in log order, with
 * secrets redacted. It only reads, so it is safe beside a running gateway.
 */
import { loadConfig } from '../config.js';
import { withCurrentSchemas } from '../event-schemas.js';
import { openEventStore } from '../eventstore/open-event-store.js';
import { redactSecrets } from '../history/redact.js';

const PAGE = 5_000;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const deviceId = args.find((a) => !a.startsWith('--'));
  const asJson = args.includes('--json');
  if (!deviceId) {
    process.stderr.write('usage: npm run history -- <deviceId> [--json]\n');
    process.exit(2);
  }
  const store = withCurrentSchemas(await openEventStore(loadConfig()));
  let after = 0;
  let count = 0;
  try {
    for (;;) {
      const page = await store.readAll({ after, maxCount: PAGE });
      if (page.length === 0) break;
      after = page[page.length - 1]!.position;
      for (const event of page) {
        if ((event.data as { deviceId?: unknown } | null)?.deviceId !== deviceId) continue;
        count++;
        const data = redactSecrets(event.data) as Record<string, unknown>;
        const { deviceId: _, ...rest } = data;
        const line = asJson
          ? JSON.stringify({ position: event.position, stream: event.streamId, revision: event.revision, type: event.type, createdAt: event.createdAt, data })
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
  process.stderr.write(`history failed: ${(error as Error).message}\n`);
  process.exit(1);
});
