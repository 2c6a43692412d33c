import { fileURLToPath } from 'node:url';

/** The repository root (children run from here, so `src/main.ts` and `bench/…` resolve). */
export const ROOT_DIR = fileURLToPath(new URL('../../', import.meta.url));

/** bench/results: one JSON file per run plus latest.json. */
export const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
