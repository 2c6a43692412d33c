/**
 * `npm run history` (the real command in a child process) only reads: a DATA_DIR without an event store is
 * refused, naming the file it looked for, and nothing is created there.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startTestGateway, tempDir } from '../support/gateway.js';
import { runToEnd } from '../support/processes.js';

function runHistory(dataDir: string, ...args: string[]) {
  return runToEnd(
    'src/cli/history.ts',
    { ...process.env, DATA_DIR: dataDir, EVENTSTORE_URL: '', LOG_LEVEL: 'silent' },
    { args },
  );
}

describe('npm run history', { timeout: 120_000 }, () => {
  it('refuses a DATA_DIR that does not exist, and does not make it', async () => {
    const dataDir = join(tempDir('dmg-history-'), 'mistyped');
    const result = await runHistory(dataDir, 'any-device');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`no event store at ${join(dataDir, 'events.sqlite')}`);
    expect(result.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses a DATA_DIR without an event store, and leaves it empty', async () => {
    const dataDir = tempDir('dmg-history-');
    const result = await runHistory(dataDir, 'any-device', '--json');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`no event store at ${join(dataDir, 'events.sqlite')}`);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it("reads a stopped gateway's store", async () => {
    const gateway = await startTestGateway({ EVENTSTORE_URL: '' });
    try {
      expect(
        (await gateway.api('POST', '/devices', { admin: true, json: { id: 'seen', name: 'seen', engine: 'sandbox' } }))
          .status,
      ).toBe(201);
    } finally {
      await gateway.close();
    }
    const result = await runHistory(gateway.dataDir, 'seen');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/#1 {2}device-seen@0 {2}DeviceCreated/);
    expect(result.stderr).toContain('1 events of device seen');
  });

  it('never migrates a store of another version (it opens it read-only): it says so and leaves it as it was', async () => {
    const gateway = await startTestGateway({ EVENTSTORE_URL: '' });
    await gateway.close();
    const file = join(gateway.dataDir, 'events.sqlite');
    const older = new Database(file);
    older.pragma('user_version = 1');
    older.close();
    const result = await runHistory(gateway.dataDir, 'seen');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      'has store schema 1, this gateway reads 2: start this version of the gateway on it once',
    );
    const after = new Database(file, { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(1);
    after.close();
  });
});
