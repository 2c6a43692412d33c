/**
 * Who is using a DATA_DIR: every running gateway holds a lock file of its own in `DATA_DIR/locks`, and
 * `npm run rebuild`, which throws the read models away and writes them anew, holds the one `rebuild.lock`. A
 * rebuild refuses to run while a gateway's lock is live, and a gateway refuses to start during a rebuild, each
 * with words saying what to do. Gateways share a data directory only when they share its devices through
 * leases (GATEWAY_PROCESSES, GATEWAY_CLUSTER), each with read models of its own: a second lone gateway would
 * run every device a second time (two connections per account) and write the first one's read models.
 *
 * Each holder writes its file first and looks for the other kind after, so that of two starting at once at
 * least one sees the other. A lock is live while its holder refreshes it (every HEARTBEAT_MS) and, on this
 * host, while its process exists: a gateway killed with SIGKILL leaves a file that stops counting at once on
 * the same host, and after STALE_MS anywhere else (another container sharing the volume).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export const HEARTBEAT_MS = 10_000;
export const STALE_MS = 35_000;
const REBUILD_LOCK = 'rebuild.lock';
const GATEWAY_PREFIX = 'gateway-';

interface LockInfo {
  pid: number;
  host: string;
  since: string;
  /** Gateways only: whether it runs devices under leases, and the read-model file it writes (absent in older locks). */
  leases?: boolean;
  readModels?: string;
}

/** How a gateway uses the data directory. */
export interface GatewayUse {
  /** It runs only the devices whose lease it holds (several processes); otherwise it runs every device. */
  leases: boolean;
  /** The read-model file it writes (its one writer). */
  readModels: string;
}

/** The data directory is in use by the other kind of holder; the message says by whom and what to do. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

export interface HeldLock {
  release(): void;
}

const locksDir = (dataDir: string) => join(dataDir, 'locks');

function readLock(path: string): (LockInfo & { refreshedAt: number }) | undefined {
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as LockInfo;
    return { ...info, refreshedAt: statSync(path).mtimeMs };
  } catch {
    return undefined; // gone, or half-written by a holder that is just starting (it looks again after)
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isLive(lock: LockInfo & { refreshedAt: number }, now = Date.now()): boolean {
  if (now - lock.refreshedAt > STALE_MS) return false;
  return lock.host !== hostname() || processExists(lock.pid);
}

const describeHolder = (lock: LockInfo) =>
  `pid ${lock.pid}${lock.host === hostname() ? '' : ` on ${lock.host}`}, since ${lock.since}`;

/** Writes `path` (exclusively when `exclusive`) and keeps it fresh until released. */
function hold(path: string, exclusive: boolean, use?: GatewayUse): HeldLock {
  const info: LockInfo = { pid: process.pid, host: hostname(), since: new Date().toISOString(), ...use };
  const fd = openSync(path, exclusive ? 'wx' : 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(info));
  } finally {
    closeSync(fd);
  }
  const timer = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // Removed under us (a cleanup by hand): nothing to refresh.
    }
  }, HEARTBEAT_MS);
  timer.unref();
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      rmSync(path, { force: true });
    },
  };
}

function gatewayLocks(dir: string): Array<{ path: string; lock: (LockInfo & { refreshedAt: number }) | undefined }> {
  return readdirSync(dir)
    .filter((name) => name.startsWith(GATEWAY_PREFIX))
    .map((name) => ({ path: join(dir, name), lock: readLock(join(dir, name)) }));
}

/**
 * A gateway starts using the data directory: refused while a rebuild runs, and while another live gateway runs
 * there unless both share the devices through leases and write read models of their own. Stale locks of dead
 * gateways are swept.
 */
export function holdGatewayLock(dataDir: string, use: GatewayUse): HeldLock {
  const dir = locksDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const { path, lock } of gatewayLocks(dir)) if (lock && !isLive(lock)) rmSync(path, { force: true });
  const path = join(dir, `${GATEWAY_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}.lock`);
  const held = hold(path, true, use);
  const rebuild = readLock(join(dir, REBUILD_LOCK));
  if (rebuild && isLive(rebuild)) {
    held.release();
    throw new DataDirInUseError(
      `npm run rebuild (${describeHolder(rebuild)}) is rebuilding the read models in ${dataDir}: start the gateway once it has finished`,
    );
  }
  // Written first, looked for after: of two starting at once, at least one sees the other.
  const other = gatewayLocks(dir).find(
    ({ path: otherPath, lock }) =>
      otherPath !== path &&
      lock !== undefined &&
      isLive(lock) &&
      (!use.leases || lock.leases !== true || lock.readModels === use.readModels),
  )?.lock;
  if (other) {
    held.release();
    throw new DataDirInUseError(
      `another gateway (${describeHolder(other)}) is running on ${dataDir}: one gateway runs every device of a store, so a second one would connect ` +
        'each account twice. Stop it first, or run several processes on purpose with GATEWAY_PROCESSES (GATEWAY_CLUSTER across machines)',
    );
  }
  return held;
}

/** `npm run rebuild` takes the data directory for itself: refused while any gateway uses it. */
export function holdRebuildLock(dataDir: string): HeldLock {
  const dir = locksDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, REBUILD_LOCK);
  let held: HeldLock;
  try {
    held = hold(path, true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const other = readLock(path);
    if (other && isLive(other))
      throw new DataDirInUseError(`another rebuild (${describeHolder(other)}) is running on ${dataDir}`);
    rmSync(path, { force: true }); // left by a rebuild that died
    held = hold(path, true);
  }
  const gateway = gatewayLocks(dir).find(({ lock }) => lock !== undefined && isLive(lock))?.lock;
  if (gateway) {
    held.release();
    throw new DataDirInUseError(
      `a gateway (${describeHolder(gateway)}) is using ${dataDir}: stop it first (the read models have one writer), then run the rebuild again`,
    );
  }
  return held;
}
