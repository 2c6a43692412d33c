/**
 * `npm run rebuild` (the real command in a child process) rebuilds every read-model file of DATA_DIR: the
 * lone gateway's (and GATEWAY_PROCESSES' machine projector's) `read-models.sqlite` and the `read-models.w<N>.sqlite` of
 * processes started on their own under GATEWAY_CLUSTER (GATEWAY_WORKER).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { nodeArgumentsFor } from '../support/entry-command.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway } from '../support/gateway.js';
import { runToEnd, trackChild } from '../support/processes.js';
import { appendReceivedMessages } from '../support/received-messages.js';

const rebuildEnv = (dataDir: string, env: Record<string, string> = {}) => ({
  ...process.env,
  DATA_DIR: dataDir,
  EVENTSTORE_URL: '',
  GATEWAY_PROCESSES: '',
  GATEWAY_WORKER: '',
  LOG_LEVEL: 'silent',
  ...env,
});

function runRebuild(dataDir: string, env: Record<string, string> = {}) {
  return runToEnd('src/cli/rebuild.ts', rebuildEnv(dataDir, env));
}

function count(file: string, table: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
  } finally {
    db.close();
  }
}

function deviceIds(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare<[], { id: string }>('SELECT id FROM devices ORDER BY id')
      .all()
      .map((row) => row.id);
  } finally {
    db.close();
  }
}

/** A data directory whose log holds one device, `kept`, and whose read models are those of the gateway that made it. */
async function dataDirWithOneDevice(): Promise<string> {
  const gateway = await startTestGateway({ EVENTSTORE_URL: '' });
  try {
    expect(
      (await gateway.api('POST', '/devices', { admin: true, json: { id: 'kept', name: 'kept', engine: 'sandbox' } }))
        .status,
    ).toBe(201);
  } finally {
    await gateway.close();
  }
  return gateway.dataDir;
}

describe('npm run rebuild', { timeout: 120_000 }, () => {
  it("rebuilds the workers' read-model files as well as read-models.sqlite, and names each", async () => {
    const dataDir = await dataDirWithOneDevice();
    // The workers' files as GATEWAY_PROCESSES=2 left them, stale: they lost the device, and their
    // checkpoints say they are up to date, so only a rebuild brings it back.
    const lone = new Database(join(dataDir, 'read-models.sqlite'));
    for (const worker of [1, 2]) {
      const file = join(dataDir, `read-models.w${worker}.sqlite`);
      lone.prepare('VACUUM INTO ?').run(file);
      const stale = new Database(file);
      stale.exec('DELETE FROM devices');
      stale.close();
      expect(deviceIds(file)).toEqual([]);
    }
    lone.close();

    const done = await runRebuild(dataDir);
    expect(done.status, done.stderr).toBe(0);
    for (const file of ['read-models.sqlite', 'read-models.w1.sqlite', 'read-models.w2.sqlite']) {
      expect(deviceIds(join(dataDir, file)), file).toEqual(['kept']);
      expect(done.stdout).toContain(`rebuilt every read model of ${join(dataDir, file)} from `);
    }
  });

  it("with GATEWAY_PROCESSES and no read models yet, makes the machine projector's one file, none per worker", async () => {
    const dataDir = await dataDirWithOneDevice();
    const done = await runRebuild(dataDir, { GATEWAY_PROCESSES: '3' });
    expect(done.status, done.stderr).toBe(0);
    expect(deviceIds(join(dataDir, 'read-models.sqlite'))).toEqual(['kept']);
    for (const worker of [1, 2, 3]) expect(existsSync(join(dataDir, `read-models.w${worker}.sqlite`))).toBe(false);
  });

  it('killed with SIGKILL halfway, leaves the old read models as they were; run again, it finishes', async () => {
    const dataDir = await dataDirWithOneDevice();
    // Messages the old read models never saw (written to the log after the gateway stopped): enough for a rebuild
    // that takes a while.
    const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
    const messages = 60_000;
    await appendReceivedMessages(store, 'kept', messages);
    await store.close();
    const file = join(dataDir, 'read-models.sqlite');
    expect(count(file, 'chat_messages')).toBe(0);

    const child = spawn(process.execPath, nodeArgumentsFor('src/cli/rebuild.ts'), { env: rebuildEnv(dataDir) });
    trackChild(child);
    const exited = once(child, 'exit');
    await eventually(() => existsSync(`${file}.rebuild`) || child.exitCode !== null, 'the fresh file');
    expect(child.exitCode, 'the rebuild was over before it could be killed').toBeNull();
    child.kill('SIGKILL');
    await exited;
    expect(deviceIds(file)).toEqual(['kept']);
    expect(count(file, 'chat_messages')).toBe(0);

    const done = await runRebuild(dataDir);
    expect(done.status, done.stderr).toBe(0);
    expect(deviceIds(file)).toEqual(['kept']);
    expect(count(file, 'chat_messages')).toBe(messages);
    expect(existsSync(`${file}.rebuild`)).toBe(false);
  });
});
