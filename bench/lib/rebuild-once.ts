/** Child of bench/profile-rebuild.ts: one full rebuild of the data directory given, figures on stdout. */
import { rebuildAll } from '../rebuild.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: rebuild-once.ts <dataDir>');
const { events, seconds } = await rebuildAll(dataDir);
process.stdout.write(`rebuilt ${events} events in ${seconds.toFixed(2)} s: ${Math.round(events / seconds).toLocaleString('en-US')} events/s\n`);
