/**
 * The test server (or a three-node test cluster) in a child process (esdb-test-server-process.ts), driven over its
 * control channel. For load tests: in the test's own process the nodes share one event loop with the load, and
 * answered heartbeats in seconds, as no cluster does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** A record of the cluster's log as the child sends it: data as text. */
export interface ChildRecord {
  position: string;
  streamId: string;
  type: string;
  data: string;
}

export interface EsdbTestServerChild {
  url: string;
  /** Kills the leader, elects the next live node `electionMs` later, starts the old leader again as a follower. */
  failover(electionMs?: number): Promise<{ from: number; to: number }>;
  /** Subscriptions get nothing more until endBlackHole() (or `keepAliveGivesUpMs`). */
  blackHoleSubscriptions(keepAliveGivesUpMs?: number): Promise<void>;
  endBlackHole(): Promise<void>;
  /** Every record of the log so far (fetched from where the last call ended). */
  records(): Promise<readonly ChildRecord[]>;
  /** The `connection-name` of every call so far: one per client a gateway made. */
  connectionNames(): Promise<string[]>;
  /** Calls per method so far (EsdbTestServer.calls). */
  calls(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

export async function spawnEsdbTestServer(
  options: { nodes?: number; version?: string } = {},
): Promise<EsdbTestServerChild> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/support/esdb-test-server-process.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ESDB_TEST_NODES: String(options.nodes ?? 1),
      ...(options.version ? { ESDB_TEST_VERSION: options.version } : {}),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([once(lines, 'line'), exited.then(() => undefined)]);
  if (!first) throw new Error(`the test server process exited with ${child.exitCode}`);
  const { url } = JSON.parse(String(first[0])) as { url: string };
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  lines.on('line', (line) => {
    const { id, result, error } = JSON.parse(line) as { id: number; result?: unknown; error?: string };
    const caller = waiting.get(id);
    waiting.delete(id);
    if (error !== undefined) caller?.reject(new Error(`test server: ${error}`));
    else caller?.resolve(result);
  });
  void exited.then(() => {
    for (const caller of waiting.values()) caller.reject(new Error('the test server process exited'));
    waiting.clear();
  });
  let nextId = 0;
  const call = <T>(op: string, ...args: unknown[]) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve: resolve, reject });
      child.stdin!.write(`${JSON.stringify({ id, op, args })}\n`);
    });
  const log: ChildRecord[] = [];
  // One fetch at a time: two at once would both ask from the same index and add the same records twice.
  let fetching: Promise<readonly ChildRecord[]> = Promise.resolve(log);
  return {
    url,
    failover: (electionMs = 300) => call('failover', electionMs),
    blackHoleSubscriptions: (keepAliveGivesUpMs = Infinity) =>
      call('blackHoleSubscriptions', Number.isFinite(keepAliveGivesUpMs) ? keepAliveGivesUpMs : null),
    endBlackHole: () => call('endBlackHole'),
    records() {
      fetching = fetching.then(async () => {
        log.push(...(await call<ChildRecord[]>('records', log.length)));
        return log;
      });
      return fetching;
    },
    connectionNames: () => call('connectionNames'),
    calls: () => call('calls'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin!.end();
      await exited;
    },
  };
}
