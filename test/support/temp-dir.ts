/**
 * The one way tests make temporary directories. Every directory lives under the run's own root (made by
 * test/support/global-setup.ts), is named dmg-…, and is removed by the test that made it: at the end of
 * that test when made inside a test (or its beforeEach), else at the end of the file (test/support/setup.ts).
 * The global teardown fails the run when anything is left under the root.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject, onTestFinished } from 'vitest';
import { getCurrentTest } from 'vitest/suite';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's temporary root (test/support/global-setup.ts). */
    tempRoot: string;
  }
}

/** Every directory this file made: removed (again) when the file ends, in case something wrote after its test. */
const made = new Set<string>();

function root(): string {
  try {
    return inject('tempRoot') ?? tmpdir();
  } catch {
    return tmpdir();
  }
}

/** A fresh, empty directory named `prefix…` (prefix starts with dmg-), removed when its test or file ends. */
export function tempDir(prefix = 'dmg-test-'): string {
  if (!prefix.startsWith('dmg-')) throw new Error(`temp directories are named dmg-…, got ${prefix}`);
  const path = mkdtempSync(join(root(), prefix));
  made.add(path);
  if (getCurrentTest()) onTestFinished(() => removeTempDir(path));
  return path;
}

export function removeTempDir(path: string): void {
  rmSync(path, { recursive: true, force: true, maxRetries: 3 });
}

/** Removes every directory this file made (test/support/setup.ts calls it after the file's own hooks). */
export function removeFileTempDirs(): void {
  for (const path of made) removeTempDir(path);
  made.clear();
}
