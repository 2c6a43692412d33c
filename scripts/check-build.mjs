// Runs before `npm start` (and the CLIs): dist/ must exist and be newer than every source, else say how to
// build it. Building is `npm run build`, run once by `npm ci`; starting does not type-check or compile.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const entry = process.argv[2] ?? 'dist/main.js';

function newestSource(dir) {
  let newest = { path: '', mtimeMs: 0 };
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    const candidate = item.isDirectory() ? newestSource(path) : { path, mtimeMs: statSync(path).mtimeMs };
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate;
  }
  return newest;
}

if (!existsSync(entry)) {
  console.error(
    `${entry} is missing: the gateway is not built. Run \`npm run build\` (\`npm ci\` does it too), then start again.`,
  );
  process.exit(1);
}
const built = statSync(entry).mtimeMs;
const newest = [
  newestSource('src'),
  { path: 'tsconfig.build.json', mtimeMs: statSync('tsconfig.build.json').mtimeMs },
  { path: 'tsconfig.json', mtimeMs: statSync('tsconfig.json').mtimeMs },
].reduce((a, b) => (b.mtimeMs > a.mtimeMs ? b : a));
if (newest.mtimeMs > built) {
  console.error(`dist/ is older than ${newest.path}: run \`npm run build\` to rebuild, then start again.`);
  process.exit(1);
}
