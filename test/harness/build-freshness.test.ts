/**
 * scripts/build-freshness.mjs: whether dist/ is the sources' build, read before `npm start` (scripts/check-build.mjs)
 * and by the tests that start the gateway in a child (test/support/entry-command.ts runs dist/ only when it is).
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { staleBuild } from '../../scripts/build-freshness.mjs';
import { tempDir } from '../support/temp-dir.js';

/** A repository of sources written at second 1000 and a build of them at `builtAt` (seconds), if any. */
function repository(builtAt?: number): string {
  const root = tempDir('dmg-build-');
  mkdirSync(join(root, 'src/http'), { recursive: true });
  for (const path of ['src/gateway.ts', 'src/http/server.ts', 'tsconfig.json', 'tsconfig.build.json']) {
    writeFileSync(join(root, path), '');
    utimesSync(join(root, path), 1000, 1000);
  }
  if (builtAt !== undefined) {
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist/main.js'), '');
    utimesSync(join(root, 'dist/main.js'), builtAt, builtAt);
  }
  return root;
}

describe('the build of the sources', () => {
  it('is current when built after every source and setting', () => {
    expect(staleBuild(repository(2000), 'dist/main.js')).toBeUndefined();
  });

  it('is missing where nothing was built', () => {
    expect(staleBuild(repository(), 'dist/main.js')).toEqual({ reason: 'missing' });
  });

  it('is older than a source changed since, however deep, or a TypeScript setting', () => {
    const root = repository(2000);
    utimesSync(join(root, 'src/http/server.ts'), 3000, 3000);
    expect(staleBuild(root, 'dist/main.js')).toEqual({ reason: 'older', newer: join(root, 'src/http/server.ts') });
    const settings = repository(2000);
    utimesSync(join(settings, 'tsconfig.build.json'), 3000, 3000);
    expect(staleBuild(settings, 'dist/main.js')).toEqual({ reason: 'older', newer: 'tsconfig.build.json' });
  });
});
