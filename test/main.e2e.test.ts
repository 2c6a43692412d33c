/**
 * src/main.ts as started: a start that fails for a reason a setting explains (port in use, HOST, DATA_DIR, a
 * rebuild holding the data directory) prints one line naming the setting and exits with a code a supervisor
 * can act on (78: fix the settings, 75: try again later); a setting src/config.ts refuses stops it with 78 too.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { holdRebuildLock } from '../src/storage/data-dir-lock.js';
import { ADMIN_KEY } from './support/gateway.js';
import { CHILD_GATEWAY_TESTS, freePort } from './support/child-gateway.js';
import { runToEnd } from './support/processes.js';
import { tempDir } from './support/temp-dir.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** nobody: root may read and write anything, so a directory it may not use needs another user. */
const NOBODY = 65_534;

/** src/main.ts in a child process to its end (a refused start stops at once; 60 s bound it). */
async function startMain(env: Record<string, string>, options: { uid?: number } = {}) {
  const result = await runToEnd(
    'src/main.ts',
    {
      ...process.env,
      DATA_DIR: tempDir(),
      HOST: '127.0.0.1',
      ADMIN_API_KEY: ADMIN_KEY,
      LOG_LEVEL: 'warn',
      EVENTSTORE_URL: '',
      GATEWAY_PROCESSES: '',
      ...env,
    },
    options,
  );
  // One line, no stack: what an operator reads in `journalctl` or `docker logs`.
  const lines = result.stderr.trim().split('\n');
  return { status: result.status, stderr: result.stderr, lines };
}

function expectOneLine(started: Awaited<ReturnType<typeof startMain>>, status: number, pattern: RegExp): void {
  expect(started.status, started.stderr).toBe(status);
  expect(started.lines, started.stderr).toHaveLength(1);
  expect(started.lines[0]).toMatch(/^failed to start: /);
  expect(started.lines[0]).toMatch(pattern);
  expect(started.stderr).not.toMatch(/\n\s+at /);
}

describe('a start that fails for a reason a setting explains', CHILD_GATEWAY_TESTS, () => {
  it('PORT in use', async () => {
    const port = await freePort();
    const taken = createServer().listen(port, '127.0.0.1');
    await once(taken, 'listening');
    try {
      expectOneLine(
        await startMain({ PORT: String(port) }),
        78,
        new RegExp(`PORT: 127\\.0\\.0\\.1:${port} is already in use: .*set PORT to a free port`),
      );
    } finally {
      taken.close();
    }
  });

  it('GATEWAY_PROCESSES: a worker that cannot start for a wrong setting is not started again; all stop with its code', async () => {
    const port = await freePort();
    const taken = createServer().listen(port, '127.0.0.1');
    await once(taken, 'listening');
    try {
      // Before, the primary started the failing workers again every second, for good (the 60 s timeout here).
      const started = await startMain({ PORT: String(port), GATEWAY_PROCESSES: '2' });
      expect(started.status, started.stderr).toBe(78);
      expect(started.stderr).toMatch(new RegExp(`PORT: 127\\.0\\.0\\.1:${port} is already in use`));
    } finally {
      taken.close();
    }
  });

  it('HOST that does not resolve', async () => {
    // .invalid never resolves (RFC 2606); a resolver that does not answer at all is "try again later".
    const started = await startMain({ PORT: String(await freePort()), HOST: 'no-such-host.invalid' });
    expectOneLine(
      started,
      started.stderr.includes('EAI_AGAIN') ? 75 : 78,
      /HOST: "no-such-host\.invalid" (does not resolve|could not be resolved now)/,
    );
  });

  it('DATA_DIR that is a file, or under one', async () => {
    const file = join(tempDir('dmg-main-'), 'not-a-dir');
    writeFileSync(file, 'x');
    expectOneLine(
      await startMain({ PORT: String(await freePort()), DATA_DIR: file }),
      78,
      /DATA_DIR: .*not-a-dir is not a directory/,
    );
    expectOneLine(
      await startMain({ PORT: String(await freePort()), DATA_DIR: join(file, 'data') }),
      78,
      /DATA_DIR: .*not-a-dir\/data is not a directory/,
    );
  });

  it('DATA_DIR this user may not use', async () => {
    const parent = tempDir('dmg-main-');
    const dataDir = join(parent, 'data');
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      mkdirSync(dataDir, { mode: 0o700 }); // root's, 0700: closed to nobody
    } else {
      chmodSync(parent, 0o000);
    }
    try {
      const started = await startMain(
        { PORT: String(await freePort()), DATA_DIR: dataDir },
        asRoot ? { uid: NOBODY } : {},
      );
      expectOneLine(
        started,
        78,
        /DATA_DIR: this user \(uid \d+\) may not read and write .*\/data \(EACCES\): give it access to .*\/data/,
      );
    } finally {
      chmodSync(parent, 0o700);
    }
  });

  it('EVENTSTORE_URL whose user may not read $all: stops at once, naming the right (it waited for ever)', async () => {
    const server = spawn(process.execPath, ['--import', 'tsx', 'test/support/esdb-test-server-process.ts'], {
      cwd: ROOT,
      env: { ...process.env, ESDB_TEST_DENY_ALL: '1' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      const [line] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
      const { port } = JSON.parse(line) as { port: number };
      // Before, it waited for the store for ever: the 60 s bound would end it without a status.
      expectOneLine(
        await startMain({ EVENTSTORE_URL: `esdb://127.0.0.1:${port}?tls=false` }),
        78,
        /EVENTSTORE_URL: the event store refused to let this user read \$all.*give the user of EVENTSTORE_URL the right to read \$all/,
      );
    } finally {
      server.stdin.end();
      await once(server, 'exit');
    }
  }, 90_000);

  it('a rebuild holding the data directory: try again later', async () => {
    const dataDir = tempDir('dmg-main-');
    const rebuild = holdRebuildLock(dataDir);
    try {
      expectOneLine(
        await startMain({ PORT: String(await freePort()), DATA_DIR: dataDir }),
        75,
        /DATA_DIR: npm run rebuild \(pid \d+, since .+\) is rebuilding the read models .*start the gateway once it has finished/,
      );
    } finally {
      rebuild.release();
    }
  });
});

describe('a setting src/config.ts refuses', CHILD_GATEWAY_TESTS, () => {
  it('stops the process at start with a message naming the variable', async () => {
    const started = await startMain({ PORT: 'not-a-port' });
    expect(started.status, started.stderr).toBe(78);
    expect(started.stderr).toContain('PORT: must be an integer');
  });

  it('never prints an EventStoreDB password that holds / ? : or @', async () => {
    const started = await startMain({ EVENTSTORE_URL: 'esdb://admin:pa/ss?word@db.example:2113?tls=true' });
    expect(started.status).toBe(78);
    expect(started.stderr).toContain(
      'configuration error: EVENTSTORE_URL: must be a URL, got "esdb://***@db.example:2113?tls=true"',
    );
    expect(started.stderr).not.toContain('pa/ss');
  });
});
