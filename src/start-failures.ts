/**
 * Start-up failures an operator fixes with a setting (a port in use, a HOST that does not resolve, a
 * DATA_DIR the gateway cannot use, a rebuild holding the data directory): told in one line that names the
 * setting and what to do, with an exit code a supervisor can act on. Anything else is a bug and keeps its stack.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Config } from './config.js';
import { StoreRefusedError } from './eventstore/event-store.js';
import { DataDirInUseError } from './storage/data-dir-lock.js';

/** sysexits.h: a setting is wrong (as for a ConfigError). */
export const EX_CONFIG = 78;
/** sysexits.h: try again later; nothing is wrong with the settings. */
export const EX_TEMPFAIL = 75;

export interface StartFailure {
  /** One line: the setting, what is wrong and what to do. */
  message: string;
  exitCode: number;
}

type SystemError = NodeJS.ErrnoException & { hostname?: string };

/** File system errors that mean DATA_DIR is not a directory this user may use. */
const DATA_DIR_CODES = new Set(['EACCES', 'EPERM', 'ENOTDIR', 'EEXIST', 'EROFS', 'ELOOP']);

/** SQLite could not open or write its files; they are all in DATA_DIR (events.sqlite, read models). */
const SQLITE_ACCESS_CODE = /^SQLITE_(CANTOPEN|READONLY|PERM)/;

/** What to tell for `error`, or undefined when it is not one of the failures a setting explains. */
export function explainStartFailure(
  error: unknown,
  config: Pick<Config, 'port' | 'host' | 'dataDir'>,
): StartFailure | undefined {
  if (error instanceof DataDirInUseError) return { message: `DATA_DIR: ${error.message}`, exitCode: EX_TEMPFAIL };
  // The event store's user lacks a right (reading $all): waiting would never end.
  if (error instanceof StoreRefusedError && error.code === 'access_denied')
    return configFailure(`EVENTSTORE_URL: ${error.message}`);
  if (!(error instanceof Error)) return undefined;
  const { code, syscall, path, hostname } = error as SystemError;
  if (typeof code !== 'string') return undefined;
  const { port, host, dataDir } = config;
  // A worker of GATEWAY_PROCESSES gets the primary's `bind` error for the shared port.
  if (syscall === 'listen' || syscall === 'bind') {
    if (code === 'EADDRINUSE')
      return configFailure(
        `PORT: ${host}:${port} is already in use: stop what listens there, or set PORT to a free port`,
      );
    if (code === 'EACCES')
      return configFailure(
        `PORT: this user may not listen on port ${port} (below 1024 needs privileges): set PORT to 1024 or above`,
      );
    if (code === 'EADDRNOTAVAIL')
      return configFailure(
        `HOST: ${host} is not an address of this machine: set HOST to one of its addresses (0.0.0.0: all of them)`,
      );
    return undefined;
  }
  if (syscall === 'getaddrinfo' && hostname === host) {
    // A resolver that did not answer may answer later; a name that does not exist will not.
    if (code === 'EAI_AGAIN')
      return {
        message: `HOST: "${host}" could not be resolved now (no answer from DNS): start again later, or set HOST to an address`,
        exitCode: EX_TEMPFAIL,
      };
    return configFailure(
      `HOST: "${host}" does not resolve (${code}): set HOST to an address of this machine (127.0.0.1, or 0.0.0.0 for all) or a name that resolves to one`,
    );
  }
  if (typeof path === 'string' && DATA_DIR_CODES.has(code) && onPathOf(path, dataDir)) {
    if (code === 'ENOTDIR' || code === 'EEXIST') {
      return configFailure(
        `DATA_DIR: ${dataDir} is not a directory (it, or a folder on its way, is a file): set DATA_DIR to a directory`,
      );
    }
    if (code === 'EROFS')
      return configFailure(`DATA_DIR: ${path} is on a read-only file system: set DATA_DIR to a writable directory`);
    return configFailure(
      `DATA_DIR: this user (uid ${process.getuid?.() ?? '?'}) may not read and write ${path} (${code}): give it access to ${dataDir}, or set DATA_DIR to a directory it owns`,
    );
  }
  if (SQLITE_ACCESS_CODE.test(code)) {
    return configFailure(
      `DATA_DIR: SQLite could not open or write its files in ${dataDir} (${code}: ${error.message}): give this user read and write access to the directory and its files`,
    );
  }
  return undefined;
}

const configFailure = (message: string): StartFailure => ({ message, exitCode: EX_CONFIG });

/** `path` is the data directory, inside it, or a folder on the way to it (mkdir -p fails on an ancestor). */
function onPathOf(path: string, dataDir: string): boolean {
  const within = (inner: string, outer: string) => {
    const rel = relative(outer, inner);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  };
  const absolute = resolve(path);
  return within(absolute, dataDir) || within(dataDir, absolute);
}
