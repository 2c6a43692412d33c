/** Runs in each test file before its own code (vitest setupFiles). */
import { afterAll } from 'vitest';
import { removeFileTempDirs } from './temp-dir.js';

// Registered first, so it runs after the file's own afterAll hooks (vitest runs them as a stack):
// the gateways and stores that use these directories are closed by then.
afterAll(() => removeFileTempDirs());
