/**
 * Child of bench/profile-rebuild.ts (and handy alone): one full rebuild of the data directory given,
 * figures on stdout, with the CPU time spent (on a shared machine, steadier than the wall clock).
 */
import { rebuildAll } from '../rebuild.js';

const [dataDir, only] = process.argv.slice(2);
if (!dataDir)
  throw new Error('usage: rebuild-once.ts <dataDir> [read models, comma-separated; "none": only read the log]');
const cpu = process.cpuUsage();
const { events, seconds } = await rebuildAll(
  dataDir,
  only === undefined ? undefined : only === 'none' ? [] : only.split(','),
);
const used = process.cpuUsage(cpu);
const cpuSeconds = (used.user + used.system) / 1e6;
process.stdout.write(
  `rebuilt ${events} events in ${seconds.toFixed(2)} s: ${Math.round(events / seconds).toLocaleString('en-US')} events/s; ` +
    `CPU ${cpuSeconds.toFixed(2)} s (${Math.round(events / cpuSeconds).toLocaleString('en-US')} events per CPU second)\n`,
);
