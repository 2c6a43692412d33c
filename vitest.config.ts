import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that replace a module (`vi.mock`): a module graph of their own each (`isolate: true`), so that no
 * module bound to the replacement reaches another file, nor a module another file loaded reaches them. Every
 * other file shares its worker's module graph (`isolate: false`): importing the gateway's modules in a fresh
 * worker cost more than most files' tests (docs/notes/test-durations.md).
 */
const ROOT = fileURLToPath(new URL('.', import.meta.url));
const REPLACES_A_MODULE = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.test.ts'))
  .map((path) => join('test', path))
  .filter((path) => /\bvi\.(mock|doMock|unmock|doUnmock)\(/.test(readFileSync(join(ROOT, path), 'utf8')))
  .sort();

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

/**
 * The files that start gateways (`*.e2e.test.ts`, most of the suite's time) before the rest, each group in vitest's
 * own order (longest first by an earlier run's durations; on a fresh clone, as in CI, larger first). By size alone a
 * short file that starts processes could begin last and leave one worker running it alone at the end; the quick
 * unit files fill the end instead (docs/notes/test-durations.md).
 */
class GatewaysFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const startsGateways = (file: TestSpecification) => file.moduleId.endsWith('.e2e.test.ts');
    return [...sorted.filter(startsGateways), ...sorted.filter((file) => !startsGateways(file))];
  }
}

export default defineConfig({
  test: {
    // Per project below; here it decides whether a worker runs more than one file.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Crash tests spawn gateways of their own; keep files parallel but bounded on 2 cores.
    maxWorkers: 2,
    // As many as maxWorkers: with isolate: false, tinypool ends idle workers above minWorkers mid-run and vitest
    // reports "Terminating worker thread" as an unhandled rejection (vitest-dev/vitest#8564, #8133).
    minWorkers: 2,
    // One temporary root per run; a test that leaves a directory behind fails the run.
    globalSetup: ['test/support/global-setup.ts'],
    sequence: { sequencer: GatewaysFirst },
    setupFiles: ['test/support/setup.ts'],
    projects: [
      // Every file once, unit and e2e: `sqlite` and `sqlite-isolated` (`--project 'sqlite*'`, as `npm test` does).
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: REPLACES_A_MODULE } },
      { extends: true, test: { name: 'sqlite-isolated', include: REPLACES_A_MODULE, isolate: true } },
      // The files that start no gateway (`npm run test:unit`: `--project 'unit*'`); a file that starts one is named
      // *.e2e.test.ts.
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.e2e.test.ts', ...REPLACES_A_MODULE],
        },
      },
      {
        extends: true,
        test: {
          name: 'unit-isolated',
          include: REPLACES_A_MODULE,
          exclude: ['test/**/*.e2e.test.ts'],
          isolate: true,
        },
      },
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
