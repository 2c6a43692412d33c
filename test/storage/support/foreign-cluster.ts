/**
 * A node:cluster primary that is not the gateway's (as a process manager's cluster mode runs it): two workers,
 * neither named by GATEWAY_WORKER, each take the gateway's lock on the same data directory as a lone gateway
 * would, one after the other while the first still holds it; each prints `held` or `refused`.
 */
import cluster from 'node:cluster';
import { DataDirInUseError, holdGatewayLock } from '../../../src/storage/data-dir-lock.js';

const dataDir = process.argv[2];

if (cluster.isPrimary) {
  const first = cluster.fork();
  first.once('message', () => {
    const second = cluster.fork();
    second.once('exit', () => first.send('done'));
  });
  first.once('exit', (code) => process.exit(code ?? 1));
} else {
  try {
    const lock = holdGatewayLock(dataDir, { leases: false, readModels: 'read-models.sqlite', worker: 0 });
    console.log('held');
    process.send?.('holding');
    process.once('message', () => {
      lock.release();
      process.exit(0);
    });
  } catch (error) {
    console.log(error instanceof DataDirInUseError ? 'refused' : `failed: ${String(error)}`);
    process.exit(0);
  }
}
