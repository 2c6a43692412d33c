// `npm ci` / `npm install` run this (npm's prepare): build dist/ once, so that `npm start` only starts.
// Skipped where there is nothing to build, such as an install of the dependencies alone (the Dockerfile's
// first layer, before the sources are copied; it runs `npm run build` itself later).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

if (!existsSync('src/main.ts') || !existsSync('tsconfig.build.json')) {
  console.log('prepare: no sources here, not building dist/');
  process.exit(0);
}
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.log('prepare: TypeScript is not installed (production-only install), not building dist/');
  process.exit(0);
}
const built = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
// The dashboard's assets (dist/dashboard) are built here too, never committed.
if (existsSync('dashboard/vite.config.ts')) {
  const dashboard = spawnSync('npm', ['run', '--silent', 'build:dashboard'], { stdio: 'inherit' });
  process.exit(dashboard.status ?? 1);
}
