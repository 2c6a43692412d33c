/**
 * `npx tsx bench/profile-rebuild.ts [dataDir [read models]]`: a CPU profile of a full rebuild (of the named read models). Writes bench/rebuild.ts's
 * 1,000,000-event log (into a temporary directory, or uses the log already in dataDir), then runs the
 * rebuild in a child node started with --cpu-prof (NODE_OPTIONS cannot carry that flag) and prints the
 * functions with the most self time. The .cpuprofile is kept in bench/results/ for Chrome DevTools.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_DIR, RESULTS_DIR } from './lib/paths.js';
import { makeTempDir } from './lib/temp.js';
import { writeConversationLog } from './conversations.js';
import { writeHistory } from './rebuild.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

async function main(): Promise<void> {
  const [given, only] = process.argv.slice(2);
  const temp = given ? undefined : makeTempDir('profile-rebuild');
  const dataDir = given ?? temp!.path;
  try {
    if (!existsSync(join(dataDir, 'events.sqlite'))) {
      const started = performance.now();
      // BENCH_PROFILE_LOG=conversations: the conversations bench's log (BENCH_CONVERSATIONS_MESSAGES sizes it).
      const written =
        process.env.BENCH_PROFILE_LOG === 'conversations'
          ? await writeConversationLog(dataDir)
          : await writeHistory(dataDir);
      process.stderr.write(`wrote ${written} events in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    }
    const profiles = join(RESULTS_DIR, 'profiles');
    mkdirSync(profiles, { recursive: true });
    const before = new Set(readdirSync(profiles));
    const child = spawnSync(
      process.execPath,
      [
        '--cpu-prof',
        `--cpu-prof-dir=${profiles}`,
        '--import',
        'tsx',
        'bench/lib/rebuild-once.ts',
        dataDir,
        ...(only ? [only] : []),
      ],
      {
        cwd: ROOT_DIR,
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    if (child.status !== 0) throw new Error(`the rebuild child exited with ${child.status}`);
    const file = readdirSync(profiles).find((f) => !before.has(f) && f.endsWith('.cpuprofile'));
    if (!file) throw new Error('no profile written');
    summarize(join(profiles, file));
  } finally {
    temp?.remove();
  }
}

function summarize(file: string): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    endTime: number;
  };
  const total = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(src|node_modules|bench)\//, '$1/')}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + (node.hitCount ?? 0));
  }
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25);
  process.stdout.write(`profile: ${file}\nself time, top 25 of ${total} samples:\n`);
  for (const [name, hits] of top) process.stdout.write(`${((hits / total) * 100).toFixed(1).padStart(5)} %  ${name}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
