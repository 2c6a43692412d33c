/**
 * How a test runs one of the gateway's entry points (src/main.ts, src/cli/…) in a child process: its build in dist/
 * when that build is the sources' own (`npm ci` builds it, so CI starts what `npm start` starts), else the source
 * through tsx, as after a change not yet built. From dist/ a gateway answers /health in ~1.9 s against ~3–3.7 s
 * compiled by tsx at its start (this 2-core machine, idle); docs/development.md has what it saves the suite.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBuild } from '../../scripts/build-freshness.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Read once per test worker: a source changed during the run is a change the run did not test either way. */
let built: boolean | undefined;

/** Node's arguments that run `script` (a path from the repository's root, e.g. `src/main.ts`). */
export function nodeArgumentsFor(script: string): string[] {
  const source = /^src\/(.+)\.ts$/.exec(script);
  if (source) {
    built ??= staleBuild(ROOT, 'dist/main.js') === undefined;
    const entry = `dist/${source[1]}.js`;
    if (built && existsSync(join(ROOT, entry))) return [entry];
  }
  return ['--import', 'tsx', script];
}
