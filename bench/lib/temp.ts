import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where benchmarks put their data: BENCH_TMPDIR (e.g. a directory on the production disk), else the OS temp dir. */
export const BENCH_TMP_ROOT = process.env.BENCH_TMPDIR || tmpdir();

const live = new Set<string>();
let hooked = false;

export interface TempDir {
  path: string;
  remove(): void;
  /** Leaves the directory on disk when the process exits (a post-mortem). */
  keep(): void;
}

/** A fresh directory; removed by remove(), or at the latest when the bench process exits. */
export function makeTempDir(prefix: string): TempDir {
  const path = mkdtempSync(join(BENCH_TMP_ROOT, `dmg-bench-${prefix}-`));
  live.add(path);
  if (!hooked) {
    hooked = true;
    const removeAll = () => {
      for (const dir of live) rmSync(dir, { recursive: true, force: true });
      live.clear();
    };
    process.once('exit', removeAll);
    // 'exit' does not run when a signal kills the process: exit on the signal instead, so an interrupted bench
    // removes its directories too (and lib/child.ts's exit hook stops its servers).
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      process.once(signal, () => process.exit(code));
    }
  }
  return {
    path,
    remove() {
      live.delete(path);
      rmSync(path, { recursive: true, force: true });
    },
    keep() {
      live.delete(path);
    },
  };
}
