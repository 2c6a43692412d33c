/**
 * GATEWAY_PROCESSES' primary (src/cluster/primary.ts) stops on SIGTERM also while its projector has not caught up
 * with the log: with the store away (an EventStoreDB it waits for without end) it exits at once instead of
 * waiting as long as the store is away.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CHILD_GATEWAY_TESTS, freePort } from '../support/child-gateway.js';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY, tempDir } from '../support/gateway.js';
import { trackChild } from '../support/processes.js';
import { nodeArgumentsFor } from '../support/entry-command.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('GATEWAY_PROCESSES: the primary on SIGTERM', CHILD_GATEWAY_TESTS, () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child?.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = undefined;
  });

  it('exits while its projector still waits for the store', async () => {
    const dataDir = tempDir('dmg-primary-');
    // No server listens there: opening the store waits for one.
    const storePort = await freePort();
    child = spawn(process.execPath, nodeArgumentsFor('src/main.ts'), {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        ADMIN_API_KEY: ADMIN_KEY,
        LOG_LEVEL: 'info',
        GATEWAY_PROCESSES: '2',
        EVENTSTORE_URL: `esdb://127.0.0.1:${storePort}?tls=false`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackChild(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = once(child, 'exit');
    await eventually(() => output.includes('gateway processes starting'), 'the primary started its workers', 60_000);
    child.kill('SIGTERM');
    await eventually(() => child!.exitCode !== null || child!.signalCode !== null, 'the primary exited', 30_000);
    const [code] = (await exited) as [number | null];
    expect(code, output).toBe(0);
  });
});
