/** scripts/build-freshness.mjs */
export declare function staleBuild(
  root: string,
  entry: string,
): { reason: 'missing' } | { reason: 'older'; newer: string } | undefined;
