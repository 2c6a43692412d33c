import { readFileSync } from 'node:fs';

/** The package version, read from package.json beside src/ or dist/. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
