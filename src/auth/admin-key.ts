import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { generateAdminKey } from './keys.js';

export const ADMIN_KEY_FILE = 'admin.key';

/**
 * The admin key: ADMIN_API_KEY when set; otherwise the one kept in DATA_DIR/admin.key, created with
 * mode 0600 and printed once on the first start.
 */
export function loadOrCreateAdminKey(
  configured: string | undefined,
  dataDir: string,
  log: Logger,
  terminal: { write(text: string): unknown } = process.stderr,
): string {
  if (configured) return configured;
  const file = join(dataDir, ADMIN_KEY_FILE);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = generateAdminKey();
  // 'wx' fails if another process created it in between: then theirs is the key.
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw error;
  }
  // The key goes to the terminal once, never into the structured log (which may be shipped elsewhere).
  log.warn({ file }, 'generated the admin API key; it is printed once on the terminal and kept in the file');
  terminal.write(`\nAdmin API key (shown only now, kept in ${file}):\n  ${key}\n\n`);
  return key;
}
