/** Runs in each test file before its own code (vitest setupFiles). */
import { afterAll } from 'vitest';
import { killTrackedChildren } from './processes.js';
import { removeFileTempDirs } from './temp-dir.js';

// Registered first, so they run after the file's own afterAll hooks (vitest runs them as a stack), the
// last one first: child gateways still running (a test that timed out) are killed, then the file's
// temporary directories go.
afterAll(() => removeFileTempDirs());
afterAll(() => killTrackedChildren());
