/**
 * A gateway started on a log its read models never saw (their file deleted, a read model's new version, a new
 * machine) catches them up in bulk: many pages a transaction, their deferred indexes made at the end
 * (src/projections/bulk-writes.ts). Killed with SIGKILL halfway, it leaves what it committed; started again, it
 * finishes, the indexes made again.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { removeWithCompanions } from '../../src/projections/read-model-file-rebuild.js';
import { CHILD_GATEWAY_TESTS, type ChildGateway, freePort, spawnGateway } from '../support/child-gateway.js';
import { nodeArgumentsFor } from '../support/entry-command.js';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY, apiClient, startTestGateway } from '../support/gateway.js';
import { trackChild } from '../support/processes.js';
import { appendReceivedMessages } from '../support/received-messages.js';

/**
 * More than three of the runner's bulk transactions (50,000 events each): the test kills the gateway once it sees the
 * first commit, which must come before the last even when the test's polls are slowed by a busy machine.
 */
const MESSAGES = 160_000;
const SQLITE = { EVENTSTORE_URL: '' };

/** What another connection sees committed in the read-model file (nothing while it does not exist yet). */
function committed(file: string): { position: number; messages: number; indexed: boolean } | undefined {
  if (!existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const position = db
      .prepare("SELECT position FROM projection_checkpoints WHERE name = 'message-index'")
      .pluck()
      .get() as number | undefined;
    if (position === undefined) return undefined;
    return {
      position,
      messages: db.prepare('SELECT count(*) FROM chat_messages').pluck().get() as number,
      indexed: db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'chat_messages_by_id'").get() !== undefined,
    };
  } catch {
    return undefined; // its tables not made yet
  } finally {
    db.close();
  }
}

describe('a gateway started on a log its read models never saw', CHILD_GATEWAY_TESTS, () => {
  let gateway: ChildGateway | undefined;
  afterEach(async () => {
    await gateway?.kill().catch(() => undefined);
    gateway = undefined;
  });

  it('catches them up in bulk; killed with SIGKILL halfway, started again, it finishes, indexes and all', async () => {
    const first = await startTestGateway(SQLITE);
    expect(
      (await first.api('POST', '/devices', { admin: true, json: { id: 'kept', name: 'kept', engine: 'sandbox' } }))
        .status,
    ).toBe(201);
    await first.close();
    const { dataDir } = first;
    const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
    await appendReceivedMessages(store, 'kept', MESSAGES);
    await store.close();
    const file = join(dataDir, 'read-models.sqlite');
    removeWithCompanions(file);

    const child = spawn(process.execPath, nodeArgumentsFor('src/main.ts'), {
      env: {
        ...process.env,
        ...SQLITE,
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        ADMIN_API_KEY: ADMIN_KEY,
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    trackChild(child);
    const exited = once(child, 'exit');
    const halfway = await eventually(
      () => child.exitCode !== null || ((committed(file)?.position ?? 0) > 0 && committed(file)),
      'a first bulk transaction committed',
      60_000,
    );
    child.kill('SIGKILL');
    await exited;
    expect(halfway, 'the gateway exited before it could be killed').not.toBe(true);
    // Killed between two transactions of 50,000 events, the deferred index not made yet.
    const left = committed(file)!;
    expect(left.position % 50_000).toBe(0);
    expect(left.messages).toBeGreaterThan(0);
    expect(left.messages).toBeLessThan(MESSAGES);
    expect(left.indexed).toBe(false);

    // It answers once it has built the rest of the read models: a slow machine under load took more than the usual 30 s.
    gateway = await spawnGateway(dataDir, SQLITE, { startTimeoutMs: 90_000 });
    expect(committed(file)).toMatchObject({ messages: MESSAGES, indexed: true });
    const message = await apiClient(gateway.url)('GET', `/devices/kept/messages/IN_${MESSAGES - 1}`, { admin: true });
    expect(message.status).toBe(200);
    expect(message.body).toMatchObject({ body: `message ${MESSAGES - 1}` });
  });
});
