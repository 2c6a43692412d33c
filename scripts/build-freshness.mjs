// Whether dist/ holds a build of the sources as they are: the newest of src/ and the TypeScript settings against an
// entry point's build time. Read by scripts/check-build.mjs before a start, and by the tests that start the gateway
// in a child process (test/support/entry-command.ts).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newestSource(dir) {
  let newest = { path: '', mtimeMs: 0 };
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    const candidate = item.isDirectory() ? newestSource(path) : { path, mtimeMs: statSync(path).mtimeMs };
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate;
  }
  return newest;
}

/** Why the build of `entry` (a path under `root`) is not the sources' own, or undefined when it is. */
export function staleBuild(root, entry) {
  const built = join(root, entry);
  if (!existsSync(built)) return { reason: 'missing' };
  const builtAt = statSync(built).mtimeMs;
  const newest = [
    newestSource(join(root, 'src')),
    ...['tsconfig.build.json', 'tsconfig.json'].map((path) => ({ path, mtimeMs: statSync(join(root, path)).mtimeMs })),
  ].reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a));
  return newest.mtimeMs > builtAt ? { reason: 'older', newer: newest.path } : undefined;
}
