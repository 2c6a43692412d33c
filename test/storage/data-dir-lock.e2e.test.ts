/**
 * `npm run rebuild` and gateways on one DATA_DIR: the rebuild is refused while a gateway uses it (a real
 * gateway, and the real command in a child process), a gateway is refused during a rebuild, and the locks of
 * processes that died do not count.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DataDirInUseError, holdGatewayLock, holdRebuildLock } from '../../src/storage/data-dir-lock.js';
import { startTestGateway, tempDir } from '../support/gateway.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A pid that no process has: far above any pid_max. */
const DEAD_PID = 2 ** 30;
const LONE = { leases: false, readModels: 'read-models.sqlite' };
const worker = (n: number) => ({ leases: true, readModels: `read-models.w${n}.sqlite` });

function runRebuild(dataDir: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/rebuild.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, EVENTSTORE_URL: '', LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('the data directory lock', () => {
  it(
    'npm run rebuild refuses while a gateway uses the data directory, and runs once it stopped',
    { timeout: 120_000 },
    async () => {
      const gateway = await startTestGateway({ EVENTSTORE_URL: '' });
      let stopped = false;
      try {
        const refused = runRebuild(gateway.dataDir);
        expect(refused.status, refused.stderr).toBe(75);
        expect(refused.stderr).toContain('a gateway');
        expect(refused.stderr).toContain('stop it first');
        await gateway.close();
        stopped = true;
        const done = runRebuild(gateway.dataDir);
        expect(done.status, done.stderr).toBe(0);
        expect(done.stdout).toMatch(/rebuilt every read model/);
      } finally {
        if (!stopped) await gateway.close();
      }
    },
  );

  it('a gateway is refused while a rebuild runs; either may go once the other released', () => {
    const dataDir = tempDir('dmg-lock-');
    const rebuild = holdRebuildLock(dataDir);
    expect(() => holdGatewayLock(dataDir, LONE)).toThrow(DataDirInUseError);
    expect(() => holdRebuildLock(dataDir)).toThrow(/another rebuild/);
    rebuild.release();
    const first = holdGatewayLock(dataDir, worker(1));
    const second = holdGatewayLock(dataDir, worker(2)); // processes sharing the devices through leases share a data directory
    expect(() => holdRebuildLock(dataDir)).toThrow(/a gateway \(pid \d+, since .+\) is using/);
    first.release();
    second.release();
    holdRebuildLock(dataDir).release();
  });

  it('locks left by processes that died do not count', () => {
    const dataDir = tempDir('dmg-lock-');
    mkdirSync(join(dataDir, 'locks'), { recursive: true });
    const dead = JSON.stringify({ pid: DEAD_PID, host: hostname(), since: new Date().toISOString() });
    writeFileSync(join(dataDir, 'locks', 'gateway-dead.lock'), dead);
    writeFileSync(join(dataDir, 'locks', 'rebuild.lock'), dead);
    const rebuild = holdRebuildLock(dataDir);
    rebuild.release();
    holdGatewayLock(dataDir, LONE).release();
  });

  it('a second gateway is refused unless both share the devices through leases, each with read models of its own', () => {
    const dataDir = tempDir('dmg-lock-');
    const lone = holdGatewayLock(dataDir, LONE);
    // Another lone gateway would run every device a second time; a leased one too, beside a lone one.
    expect(() => holdGatewayLock(dataDir, LONE)).toThrow(
      /another gateway \(pid \d+, since .+\) is running on .+ GATEWAY_PROCESSES/,
    );
    expect(() => holdGatewayLock(dataDir, worker(1))).toThrow(DataDirInUseError);
    lone.release();
    const one = holdGatewayLock(dataDir, worker(1));
    expect(() => holdGatewayLock(dataDir, LONE)).toThrow(DataDirInUseError);
    // Two launches of GATEWAY_PROCESSES on one data directory: their workers 1 would write one file.
    expect(() => holdGatewayLock(dataDir, worker(1))).toThrow(DataDirInUseError);
    one.release();
    holdGatewayLock(dataDir, LONE).release();
  });

  it(
    'a second gateway process started on the same data directory exits with words saying why',
    { timeout: 120_000 },
    async () => {
      const gateway = await startTestGateway({ EVENTSTORE_URL: '' });
      try {
        const second = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
          cwd: ROOT,
          env: {
            ...process.env,
            DATA_DIR: gateway.dataDir,
            EVENTSTORE_URL: '',
            PORT: '0',
            HOST: '127.0.0.1',
            LOG_LEVEL: 'silent',
            ADMIN_API_KEY: 'ak_test_admin_key_0123456789abcdef',
          },
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(second.status).not.toBe(0);
        expect(second.status).not.toBeNull();
        expect(second.stderr).toContain('another gateway');
      } finally {
        await gateway.close();
      }
    },
  );
});
