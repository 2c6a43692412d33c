/**
 * One temporary root per `vitest run` (several runs may share the machine): every test directory goes
 * under it (test/support/temp-dir.ts). At the end, anything left under the root fails the run, because a
 * test did not remove what it made; the root is removed either way.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'dmg-run-'));
  project.provide('tempRoot', root);
  return () => {
    const left = readdirSync(root);
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    if (left.length > 0) {
      process.exitCode = 1;
      throw new Error(
        `tests left ${left.length} temporary director${left.length === 1 ? 'y' : 'ies'} behind (use tempDir from test/support/temp-dir.ts): ${left.join(', ')}`,
      );
    }
  };
}
