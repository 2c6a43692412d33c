/**
 * `npx tsx bench/profile-summary.ts <file.cpuprofile> [top]`: where a V8 CPU profile's time went, as text.
 * Profiles come from `BENCH_CPU_PROF=<dir> npm run bench -- <name>` (every server child writes one when it
 * stops). Prints the busy time (idle and module loading left out), then the functions with the most self
 * time, the most inclusive time, and self time by file (native frames counted in the file that called them).
 * Times are the profiler's: wall time while the thread ran JavaScript or a native call, so on a busy machine
 * a system call (writev) also carries the time the process waited for a core.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

const selfMicros = new Map<number, number>();
profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const shortUrl = (url: string) =>
  url.replace(/^.*node_modules\//, 'nm/').replace(/^file:\/\/.*?\/(src|bench|test)\//, '$1/');
const nameOf = (node: ProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'} ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
const ancestry = function* (id: number): Generator<ProfileNode> {
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) yield byId.get(at)!;
};
/** Module loading and compiling at start-up: not what a request costs. */
const isStartup = (id: number) =>
  [...ancestry(id)].some((node) => /modules\/(esm|cjs)|tsx\/dist/.test(node.callFrame.url));
const fileOf = (id: number) => {
  for (const node of ancestry(id)) {
    if (node.callFrame.url) return shortUrl(node.callFrame.url).replace(/^(nm\/(@[^/]+\/)?[^/]+).*/, '$1');
    if (/^\((garbage collector|program)\)$/.test(node.callFrame.functionName)) return node.callFrame.functionName;
  }
  return '(native)';
};

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const files = new Map<string, number>();
let busy = 0;
for (const [id, micros] of selfMicros) {
  const node = byId.get(id)!;
  if (node.callFrame.functionName === '(idle)' || isStartup(id)) continue;
  busy += micros;
  self.set(nameOf(node), (self.get(nameOf(node)) ?? 0) + micros);
  files.set(fileOf(id), (files.get(fileOf(id)) ?? 0) + micros);
  const seen = new Set<string>();
  for (const frame of ancestry(id)) {
    const name = nameOf(frame);
    if (seen.has(name)) continue; // recursion counts once
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
  }
}

const print = (title: string, entries: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(
      `${((100 * micros) / busy).toFixed(1).padStart(6)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}\n`,
    );
  }
};
process.stdout.write(`busy ${(busy / 1e6).toFixed(2)} s (idle and start-up left out)\n`);
print('self time', self);
print('inclusive time', inclusive);
print('self time by file', files);
