/**
 * `npm run history` (the real command in a child process) only reads: a DATA_DIR without an event store is
 * refused, naming the file it looked for, and nothing is created there.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startTestGateway, tempDir } from '../support/gateway.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function runHistory(dataDir: string, ...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/history.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, EVENTSTORE_URL: '', LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('npm run history', { timeout: 120_000 }, () => {
  it('refuses a DATA_DIR that does not exist, and does not make it', () => {
    const dataDir = join(tempDir('dmg-history-'), 'mistyped');
    const result = runHistory(dataDir, 'any-device');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`no event store at ${join(dataDir, 'events.sqlite')}`);
    expect(result.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('refuses a DATA_DIR without an event store, and leaves it empty', () => {
    const dataDir = tempDir('dmg-history-');
    const result = runHistory(dataDir, 'any-device', '--json');
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
    const result = runHistory(gateway.dataDir, 'seen');
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
    const result = runHistory(gateway.dataDir, 'seen');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(
      'has store schema 1, this gateway reads 2: start this version of the gateway on it once',
    );
    const after = new Database(file, { readonly: true });
    expect(after.pragma('user_version', { simple: true })).toBe(1);
    after.close();
  });
});
