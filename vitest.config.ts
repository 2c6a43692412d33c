import { defineConfig } from 'vitest/config';

/**
 * The gateway's own suites that run a second time on EventStoreDB: every gateway they start gets an
 * EventStoreDB protocol test server of its own (test/support/test-store.ts). `npm run test:esdb` runs
 * only these; `npm test` runs both projects.
 */
const ON_EVENTSTOREDB = [
  'test/http/routes/session.test.ts',
  'test/actors/restart.test.ts',
  'test/engines/sandbox/sandbox-network.test.ts',
  'test/http/routes/outbox.test.ts',
  'test/outbox/crash.test.ts',
  'test/http/routes/send.test.ts',
  'test/webhooks/delivery.test.ts',
  'test/http/routes/hooks.test.ts',
  'test/webhooks/hook-secrets.test.ts',
  'test/webhooks/restart.test.ts',
  'test/webhooks/sandbox-e2e.test.ts',
  'test/devices/crash.test.ts',
  'test/groups/groups.test.ts',
];

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
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'] } },
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
