// Runs before `npm start` (and the CLIs): dist/ must exist and be newer than every source, else say how to
// build it. Building is `npm run build`, run once by `npm ci`; starting does not type-check or compile.
import { staleBuild } from './build-freshness.mjs';

const entry = process.argv[2] ?? 'dist/main.js';
const stale = staleBuild('.', entry);
if (stale?.reason === 'missing') {
  console.error(
    `${entry} is missing: the gateway is not built. Run \`npm run build\` (\`npm ci\` does it too), then start again.`,
  );
  process.exit(1);
}
if (stale) {
  console.error(`dist/ is older than ${stale.newer}: run \`npm run build\` to rebuild, then start again.`);
  process.exit(1);
}
