/**
 * The EventStoreDB protocol test server (esdb-test-server.ts) in a process of its own: for tests that kill a gateway
 * with SIGKILL (the store must outlive the gateway, as a real server would), and for load tests whose server must
 * not share a starved event loop with the load (a cluster answering heartbeats in seconds measures the test, not
 * the gateway). Prints `{"port":…,"url":…}` once listening (ESDB_TEST_NODES=3: a three-node cluster;
 * ESDB_TEST_DENY_ALL=1: it refuses reads of $all; ESDB_TEST_VERSION: the release it plays), then answers control lines on stdin (esdb-test-server-child.ts);
 * stops when its stdin closes (the test process ended) or on SIGTERM.
 */
import { createInterface } from 'node:readline';
import { EsdbTestServer } from './esdb-test-server.js';

const server = new EsdbTestServer({
  nodes: Number(process.env.ESDB_TEST_NODES ?? 1),
  version: process.env.ESDB_TEST_VERSION || undefined,
});
// A user without the right to read $all (test/main.e2e.test.ts).
server.denyAll = process.env.ESDB_TEST_DENY_ALL === '1';
await server.start();
process.stdout.write(`${JSON.stringify({ port: server.port, url: server.url })}\n`);

/** The control channel: one JSON line `{id, op, args}` in, one `{id, result}` or `{id, error}` out. */
const ops: Record<string, (...args: never[]) => unknown> = {
  failover: (electionMs: number) => server.failover(electionMs),
  killLeader: () => server.killLeader(),
  elect: (index: number) => server.elect(index),
  restartNode: (index: number) => server.restartNode(index),
  blackHoleSubscriptions: (keepAliveGivesUpMs: number | null) =>
    server.blackHoleSubscriptions(keepAliveGivesUpMs ?? Infinity),
  endBlackHole: () => server.endBlackHole(),
  connectionNames: () => [...server.connectionNames],
  calls: () => server.calls,
  // The log from an index on (each caller keeps what it has read): data as text, the gateway writes JSON.
  records: (from: number) =>
    server
      .allRecords()
      .slice(from)
      .map((record) => ({
        position: String(record.position),
        streamId: record.streamId,
        type: record.type,
        data: Buffer.from(record.data).toString('utf8'),
      })),
};
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void server.stop().finally(() => process.exit(0));
};
createInterface({ input: process.stdin })
  .on('line', (line) => {
    const { id, op, args = [] } = JSON.parse(line) as { id: number; op: string; args?: never[] };
    void (async () => {
      try {
        if (!ops[op]) throw new Error(`unknown op ${op}`);
        const result = await ops[op](...args);
        process.stdout.write(`${JSON.stringify({ id, result: result ?? null })}\n`);
      } catch (error) {
        process.stdout.write(`${JSON.stringify({ id, error: String(error) })}\n`);
      }
    })();
  })
  .on('close', stop);
process.on('SIGTERM', stop);
