/**
 * The EventStoreDB protocol test server (esdb-test-server.ts) in a process of its own, for tests that kill
 * a gateway with SIGKILL: the store must outlive the gateway, as a real server would. Prints
 * `{"port":…}` once listening (ESDB_TEST_DENY_ALL=1: it refuses reads of $all); stops when its stdin closes (the test process ended) or on SIGTERM.
 */
import { EsdbTestServer } from './esdb-test-server.js';

const server = new EsdbTestServer();
// A user without the right to read $all (test/main.e2e.test.ts).
server.denyAll = process.env.ESDB_TEST_DENY_ALL === '1';
await server.start();
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void server.stop().finally(() => process.exit(0));
};
process.stdin.on('end', stop).on('close', stop).resume();
process.on('SIGTERM', stop);
