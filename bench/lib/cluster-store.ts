/** What the cluster benches read straight from the shared SQLite file, and how they wait for it. */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';

/** Rows of a query on the data directory's event store, opened read-only for this one query. */
export function queryStore<T>(dataDir: string, sql: string): T[] {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare<[], T>(sql).all();
  } finally {
    db.close();
  }
}

/** deviceId → pid of the process holding its lease (member ids end in `-<pid>-<n>`; src/cluster). */
export function leaseOwners(dataDir: string): Map<string, number> {
  const rows = queryStore<{ type: string; data: string }>(
    dataDir,
    // A range on streams' key, not LIKE (which scans the whole log): benches call this while the log grows.
    `SELECT e.type, e.data FROM streams s JOIN events e ON e.stream_id = s.stream_id AND e.revision = s.revision WHERE s.stream_id >= 'lease-' AND s.stream_id < 'lease.'`,
  );
  const owners = new Map<string, number>();
  for (const row of rows) {
    if (row.type !== 'LeaseAcquired') continue;
    const { deviceId, owner } = JSON.parse(row.data) as { deviceId: string; owner: string };
    owners.set(deviceId, Number(owner.split('-').at(-2)));
  }
  return owners;
}

/** Polls `check` (a throw counts as not yet) until it holds, or fails naming `what`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}
