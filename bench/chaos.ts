/**
 * `npm run chaos [-- --cycles N]`: kill -9 loop of a child gateway under send and sandbox inbound load,
 * with a webhook receiver that goes down and up (bench/lib/chaos.ts says what is checked). Prints the
 * cycles and counts and writes bench/results/chaos-<ISO timestamp>.json and bench/results/chaos-latest.json.
 * Exit code 1 when a check failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CHAOS_OPTIONS, runChaos } from './lib/chaos.js';
import { RESULTS_DIR } from './lib/paths.js';
import { currentCommit, describeMachine } from './lib/report.js';
import { BENCH_TMP_ROOT } from './lib/temp.js';

const MAX_CYCLES = 200;

function cyclesArgument(): number {
  const index = process.argv.indexOf('--cycles');
  if (index < 0) return DEFAULT_CHAOS_OPTIONS.cycles;
  const value = Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1 || value > MAX_CYCLES) {
    process.stderr.write(`--cycles must be an integer from 1 to ${MAX_CYCLES}\n`);
    process.exit(2);
  }
  return value;
}

async function main(): Promise<number> {
  const date = new Date().toISOString();
  const cycles = cyclesArgument();
  process.stderr.write(`chaos ${date}: ${cycles} kill -9 cycles\n`);
  const report = await runChaos({ cycles, log: (line) => process.stderr.write(`  ${line}\n`) });
  const json = `${JSON.stringify({ date, machine: describeMachine(BENCH_TMP_ROOT), commit: currentCommit(), chaos: report }, null, 2)}\n`;
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `chaos-${date.replace(/:/g, '-')}.json`);
  writeFileSync(file, json);
  writeFileSync(join(RESULTS_DIR, 'chaos-latest.json'), json);
  const { sends, inbound, webhooks } = report;
  process.stdout.write(
    [
      `cycles ${report.cycles} in ${report.durationSeconds} s; integrity_check ${report.integrityCheck}`,
      `sends:    ${sends.attempted} attempted, ${sends.acknowledged} acknowledged (202), ${sends.retriedAfterCut} retried after a cut, lost ${sends.lost}, keys under two ids ${sends.keysUnderTwoIds}, not read ${sends.notRead}; answers ${JSON.stringify(sends.statuses)}`,
      `inbound:  ${inbound.attempted} attempted, ${inbound.acknowledged} acknowledged (202), lost ${inbound.lost} ${inbound.lostSamples.join(', ')}; answers ${JSON.stringify(inbound.statuses)}`,
      `webhooks: ${webhooks.expected} events expected, ${webhooks.requests} requests (${webhooks.redeliveries} redeliveries of a webhook-id), undelivered ${webhooks.undelivered}, events under two ids ${webhooks.eventsWithTwoIds}; receiver outages ${webhooks.receiverOutages}`,
      report.failures.length === 0 ? 'every check held' : `FAILED: ${report.failures.join('; ')}`,
      `results: ${file}`,
      '',
    ].join('\n'),
  );
  return report.failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`chaos failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
