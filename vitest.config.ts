import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Crash tests spawn gateways of their own; keep files parallel but bounded on 2 cores.
    maxWorkers: 2,
    // One temporary root per run; a test that leaves a directory behind fails the run.
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup.ts'],
  },
});
