/**
 * DATA_DIR holds message text, webhook secrets and (without ENCRYPTION_KEY) WhatsApp credentials: only
 * the gateway's own user may read it. The umask makes every folder the process creates 0700 and every
 * file 0600 (SQLite's database, WAL and shared-memory files included); a data directory left by an older
 * version with wider modes is tightened at start.
 */
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_UMASK = 0o077;

export function usePrivateFileModes(): void {
  process.umask(PRIVATE_UMASK);
}

/** Creates DATA_DIR (0700) and narrows what an older version left: the folder, its files and media folders. */
export function tightenDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const tighten = (path: string, mode: number) => {
    try {
      chmodSync(path, mode);
    } catch {
      // Not ours to change (another owner): leave it.
    }
  };
  tighten(dataDir, 0o700);
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    if (entry.isFile()) tighten(join(dataDir, entry.name), 0o600);
    else if (entry.isDirectory() && entry.name === 'media') {
      tighten(join(dataDir, entry.name), 0o700);
      for (const device of readdirSync(join(dataDir, entry.name), { withFileTypes: true })) {
        if (device.isDirectory()) tighten(join(dataDir, entry.name, device.name), 0o700);
      }
    }
  }
}
