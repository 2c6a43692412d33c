/**
 * Which event store the gateways of the tests run on. By default the embedded SQLite file in their
 * DATA_DIR. With DMG_TEST_EVENTSTORE=test-server (the `esdb` vitest project, vitest.config.ts) every
 * gateway gets an EventStoreDB protocol test server of its own (test/support/esdb-test-server.ts), kept
 * per DATA_DIR so that a gateway restarted on the same data finds its events again: in this process for
 * gateways started in process, in a child process for gateways that tests kill with SIGKILL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { SQLITE_STORE_FILE } from '../../src/eventstore/open-event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { type EsdbTestServer, startEsdbTestServer } from './esdb-test-server.js';

export const onEsdbTestServer = process.env.DMG_TEST_EVENTSTORE === 'test-server';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

const servers = new Map<string, Promise<RunningServer>>();

/** The settings that point a gateway on `dataDir` at its store: {} for SQLite, else its test server's URL. */
export async function storeSettings(
  dataDir: string,
  where: 'in-process' | 'child-process',
): Promise<Record<string, string>> {
  if (!onEsdbTestServer) return {};
  let server = servers.get(dataDir);
  if (!server) {
    server = where === 'in-process' ? inProcess() : childProcess();
    servers.set(dataDir, server);
  }
  return { EVENTSTORE_URL: (await server).url };
}

/** The store a gateway on `dataDir` uses, opened by the test (close it when done). */
export async function openTestStore(dataDir: string): Promise<EventStore> {
  const server = servers.get(dataDir);
  if (!server) return new SqliteEventStore(join(dataDir, SQLITE_STORE_FILE));
  const { openEventStoreDbStore } = await import('../../src/eventstore/eventstoredb/eventstoredb-event-store.js');
  return openEventStoreDbStore((await server).url);
}

/** Stops every test server started for this test file (vitest setup file, afterAll). */
export async function stopTestStores(): Promise<void> {
  const running = [...servers.values()];
  servers.clear();
  await Promise.allSettled(running.map(async (server) => (await server).stop()));
}

async function inProcess(): Promise<RunningServer> {
  const server: EsdbTestServer = await startEsdbTestServer();
  return { url: server.url, stop: () => server.stop() };
}

async function childProcess(): Promise<RunningServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/support/esdb-test-server-process.ts'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([once(lines, 'line'), exited.then(() => undefined)]);
  if (!first) throw new Error(`the test server process exited with ${child.exitCode}`);
  const { port } = JSON.parse(String(first[0])) as { port: number };
  return {
    url: `esdb://127.0.0.1:${port}?tls=false`,
    async stop() {
      if (child.exitCode === null) {
        child.stdin!.end();
        await exited;
      }
    },
  };
}
