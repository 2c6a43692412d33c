/**
 * Who is using a DATA_DIR. A lone gateway and `npm run rebuild` (which throws the read models away and writes
 * them anew) each take the data directory for themselves; gateways that share its devices through leases
 * (GATEWAY_PROCESSES, GATEWAY_CLUSTER) share it, each with a read-model file of its own, and exclude the other
 * two. Each refused start says who holds the directory and what to do.
 *
 * The locks are SQLite's own file locks (fcntl) on small SQLite files in `DATA_DIR/locks`, held by an open
 * transaction for the holder's whole life: `data-dir.lock` (exclusive for a lone gateway or a rebuild, shared
 * for each leased gateway) and one `read-models….lock` per read-model file (exclusive: one writer each). The
 * kernel drops them when the holder's process ends, however it ends: a restart right after `kill -9` starts,
 * whether or not the dead process was reaped yet, and so does a gateway that is pid 1 in a container started
 * again (a check of pids counted a zombie, and the restarted container's own pid 1, as a live holder). Whether a
 * holder is live is never judged from a pid or a clock. JSON files beside the locks only say who holds them.
 */
import cluster from 'node:cluster';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const DATA_DIR_LOCK = 'data-dir';
/** Files of the lock files of older versions (a JSON file kept fresh by its holder): swept by an exclusive holder. */
const LEGACY_LOCK = /^(gateway-.+|rebuild)\.lock$/;
/** An older version's holder touched its file at least this often (its HEARTBEAT_MS was 10 s, its STALE_MS 35 s). */
const LEGACY_STALE_MS = 35_000;

interface HolderInfo {
  kind: 'gateway' | 'rebuild';
  pid: number;
  host: string;
  since: string;
  /** Older versions' lock files: the gateway ran its devices under leases. */
  leases?: boolean;
}

/** How a gateway uses the data directory. */
export interface GatewayUse {
  /** It runs only the devices whose lease it holds (several processes); otherwise it runs every device. */
  leases: boolean;
  /** The read-model file it writes (its one writer). */
  readModels: string;
  /** Its number among GATEWAY_PROCESSES' workers (GATEWAY_WORKER, set by our primary); 0 for a lone process. */
  worker: number;
}

/** The data directory is in use by another holder; the message says by whom and what to do. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

export interface HeldLock {
  release(): void;
}

const locksDir = (dataDir: string) => join(dataDir, 'locks');
const lockNameOf = (readModels: string) => readModels.replace(/\.sqlite$/, '');

/** Open lock connections: referenced here so that no collection of a dropped handle could close one early. */
const openLocks = new Set<Database.Database>();

/**
 * Takes the lock `locks/<name>.lock` exclusively or shared, at once or not at all (undefined: another process,
 * or another connection of this one, holds it in a conflicting mode).
 */
function tryLock(dir: string, name: string, mode: 'exclusive' | 'shared'): Database.Database | undefined {
  const db = new Database(join(dir, `${name}.lock`), { timeout: 0 });
  try {
    // Never give the file lock back between transactions; the transaction below is never ended either.
    db.pragma('locking_mode = EXCLUSIVE');
    if (mode === 'exclusive') db.exec('BEGIN EXCLUSIVE');
    else {
      db.exec('BEGIN');
      db.prepare('SELECT count(*) FROM sqlite_schema').get(); // a read takes the shared lock
    }
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw error;
  }
  openLocks.add(db);
  return db;
}

function readInfo(path: string): HolderInfo | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as HolderInfo;
  } catch {
    return undefined; // gone, or being written by a holder that just took its lock
  }
}

const infoOf = (kind: HolderInfo['kind']): HolderInfo => ({
  kind,
  pid: process.pid,
  host: hostname(),
  since: new Date().toISOString(),
});

const describe = (holder: HolderInfo) =>
  `pid ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}, since ${holder.since}`;

/** The newest holder named beside `locks` (the exclusive holder's file first), for a refusal's words. */
function holderIn(dir: string, exclusiveOnly: boolean): HolderInfo | undefined {
  const exclusive = readInfo(join(dir, `${DATA_DIR_LOCK}.json`));
  if (exclusive || exclusiveOnly) return exclusive;
  // Leased gateways: files of some that died may still be there; the newest is the likeliest to be live.
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => readInfo(join(dir, name)))
    .filter((info): info is HolderInfo => info !== undefined)
    .sort((a, b) => b.since.localeCompare(a.since))[0];
}

function held(dir: string, locks: Array<{ db: Database.Database; infoFile?: string }>): HeldLock {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      for (const { db, infoFile } of locks) {
        if (infoFile) rmSync(join(dir, infoFile), { force: true });
        openLocks.delete(db);
        db.close();
      }
    },
  };
}

const anotherGateway = (dataDir: string, holder: HolderInfo | undefined) =>
  new DataDirInUseError(
    `another gateway (${holder ? describe(holder) : 'pid unknown'}) is running on ${dataDir}: one gateway runs every device of a store, so a second one would connect ` +
      'each account twice. Stop it first, or run several processes on purpose with GATEWAY_PROCESSES (GATEWAY_CLUSTER across machines)',
  );

/** Refusal for the holder of the whole directory, seen by a process that wants to use it. */
function refusedByExclusive(dataDir: string, dir: string, forRebuild: boolean): DataDirInUseError {
  const holder = holderIn(dir, false);
  if (holder?.kind === 'rebuild')
    return forRebuild
      ? new DataDirInUseError(`another rebuild (${describe(holder)}) is running on ${dataDir}`)
      : new DataDirInUseError(
          `npm run rebuild (${describe(holder)}) is rebuilding the read models in ${dataDir}: start the gateway once it has finished`,
        );
  if (forRebuild)
    return new DataDirInUseError(
      `a gateway (${holder ? describe(holder) : 'pid unknown'}) is using ${dataDir}: stop it first (the read models have one writer), then run the rebuild again`,
    );
  return anotherGateway(dataDir, holder);
}

/**
 * The lock files of an older version's holders that are still live, by that version's own rule (refreshed within
 * its stale time; on this host, a process other than this one that exists): during a rolling upgrade the old
 * gateway knows nothing of the SQLite locks, so its file is all that says it still runs.
 */
function liveLegacyHolders(dir: string): Array<{ rebuild: boolean; leases: boolean; info: HolderInfo }> {
  const live = [];
  for (const name of readdirSync(dir)) {
    if (!LEGACY_LOCK.test(name)) continue;
    const path = join(dir, name);
    let refreshedAt: number;
    try {
      refreshedAt = statSync(path).mtimeMs;
    } catch {
      continue; // gone meanwhile
    }
    const info = readInfo(path);
    if (!info || Date.now() - refreshedAt > LEGACY_STALE_MS) continue;
    if (info.host === hostname() && (info.pid === process.pid || !processExists(info.pid))) continue;
    live.push({ rebuild: name === 'rebuild.lock', leases: info.leases === true, info });
  }
  return live;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const olderVersion = (dataDir: string, holder: { rebuild: boolean; info: HolderInfo }) =>
  new DataDirInUseError(
    `an older version's ${holder.rebuild ? 'rebuild' : 'gateway'} (${describe(holder.info)}) is using ${dataDir}: stop it first, then start this one`,
  );

/** The whole data directory for this process (a lone gateway, a rebuild); older lock and holder files are swept. */
function holdExclusive(dataDir: string, kind: HolderInfo['kind']): HeldLock {
  const dir = locksDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const db = tryLock(dir, DATA_DIR_LOCK, 'exclusive');
  if (!db) throw refusedByExclusive(dataDir, dir, kind === 'rebuild');
  const legacy = liveLegacyHolders(dir)[0];
  if (legacy) {
    openLocks.delete(db);
    db.close();
    throw olderVersion(dataDir, legacy);
  }
  // Nobody else holds any lock here now: every holder file left is of a process that ended.
  for (const name of readdirSync(dir))
    if (name.endsWith('.json') || LEGACY_LOCK.test(name)) rmSync(join(dir, name), { force: true });
  const infoFile = `${DATA_DIR_LOCK}.json`;
  writeFileSync(join(dir, infoFile), JSON.stringify(infoOf(kind)), { mode: 0o600 });
  return held(dir, [{ db, infoFile }]);
}

/**
 * Leased gateways: the directory shared, and each of `readModels` (the read-model files written) for this process
 * alone. Refused while a lone gateway or a rebuild holds the directory, or another process writes one of them.
 */
function holdShared(dataDir: string, readModels: string[]): HeldLock {
  const dir = locksDir(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const shared = tryLock(dir, DATA_DIR_LOCK, 'shared');
  if (!shared) throw refusedByExclusive(dataDir, dir, false);
  // An older version's lone gateway or rebuild excludes leased gateways as it did then.
  const legacy = liveLegacyHolders(dir).find((holder) => holder.rebuild || !holder.leases);
  if (legacy) {
    openLocks.delete(shared);
    shared.close();
    throw olderVersion(dataDir, legacy);
  }
  // No lone gateway nor rebuild can be live now: the file naming one is of a process that ended.
  rmSync(join(dir, `${DATA_DIR_LOCK}.json`), { force: true });
  const locks: Array<{ db: Database.Database; infoFile?: string }> = [{ db: shared }];
  const lock = held(dir, locks);
  for (const file of readModels) {
    const name = lockNameOf(file);
    const db = tryLock(dir, name, 'exclusive');
    if (!db) {
      lock.release();
      // Two launches of GATEWAY_PROCESSES on one data directory: their workers 1 would write one file.
      throw anotherGateway(dataDir, readInfo(join(dir, `${name}.json`)));
    }
    const infoFile = `${name}.json`;
    writeFileSync(join(dir, infoFile), JSON.stringify(infoOf('gateway')), { mode: 0o600 });
    locks.push({ db, infoFile });
  }
  return lock;
}

/**
 * A gateway starts using the data directory: refused while a rebuild runs, and while another gateway runs there
 * unless both share the devices through leases and write read models of their own. A worker of
 * GATEWAY_PROCESSES takes nothing: its primary holds the locks for all of them (holdWorkersLock), so that a
 * worker started again never meets its own predecessor's lock, and a second launch is refused as a whole.
 */
export function holdGatewayLock(dataDir: string, use: GatewayUse): HeldLock {
  // Only a worker our own primary forked (it names it): a process manager's cluster mode (PM2's, say) runs lone
  // gateways as node:cluster workers too, and each of those must take the lock like any lone gateway.
  if (cluster.isWorker && use.worker > 0) return { release() {} };
  return use.leases ? holdShared(dataDir, [use.readModels]) : holdExclusive(dataDir, 'gateway');
}

/** The primary of GATEWAY_PROCESSES, for its workers: the directory shared, and every worker's read-model file. */
export function holdWorkersLock(dataDir: string, readModels: string[]): HeldLock {
  return holdShared(dataDir, readModels);
}

/** `npm run rebuild` takes the data directory for itself: refused while any gateway uses it. */
export function holdRebuildLock(dataDir: string): HeldLock {
  return holdExclusive(dataDir, 'rebuild');
}
