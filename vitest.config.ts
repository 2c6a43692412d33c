import { defineConfig } from 'vitest/config';

/**
 * The gateway's own suites that run a second time on EventStoreDB: every gateway they start gets an
 * EventStoreDB protocol test server of its own (test/support/test-store.ts). `npm run test:esdb` runs
 * only these; `npm test` runs both projects.
 */
const ON_EVENTSTOREDB = [
  'test/http/routes/session.e2e.test.ts',
  'test/actors/restart.e2e.test.ts',
  'test/engines/sandbox/sandbox-network.e2e.test.ts',
  'test/http/routes/outbox.e2e.test.ts',
  'test/outbox/crash.e2e.test.ts',
  'test/http/routes/send.e2e.test.ts',
  'test/webhooks/delivery.e2e.test.ts',
  'test/http/routes/hooks.e2e.test.ts',
  'test/webhooks/hook-secrets.e2e.test.ts',
  'test/webhooks/restart.e2e.test.ts',
  'test/webhooks/sandbox.e2e.test.ts',
  'test/devices/crash.e2e.test.ts',
  'test/groups/groups.e2e.test.ts',
  'test/outputs/outputs.e2e.test.ts',
  'test/webhooks/webhooks-upgrade.e2e.test.ts',
];

/**
 * Standing checks that also run alone, by a script of their own (`npm run chaos:esdb`); `npm test` runs them in the
 * sqlite project with the rest (issue 31 asks for the leader-kill test there).
 */
const CHAOS = ['test/cluster/esdb-leader-chaos.e2e.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Crash tests spawn gateways of their own; keep files parallel but bounded on 2 cores.
    maxWorkers: 2,
    // One temporary root per run; a test that leaves a directory behind fails the run.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup.ts'],
    projects: [
      // Every file once: the unit files and the e2e files. `npm test` runs this project, never `unit` beside it.
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } },
      // The files that start no gateway (`npm run test:unit`); a file that starts one is named *.e2e.test.ts.
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/**/*.e2e.test.ts'] } },
      { extends: true, test: { name: 'chaos', include: CHAOS } },
      {
        extends: true,
        test: {
          name: 'esdb',
          include: ON_EVENTSTOREDB,
          // A gateway on a gRPC store answers slower than on SQLite, and the crash tests run three gateways each.
          testTimeout: 120_000,
          env: { DMG_TEST_EVENTSTORE: 'test-server' },
          setupFiles: ['test/support/setup.ts', 'test/support/esdb-setup.ts'],
        },
      },
    ],
  },
});
