/**
 * The gateway (src/main.ts, sandbox devices) started as a child process on a DATA_DIR a bench wrote itself,
 * e.g. a log written straight into the store and its read models rebuilt.
 */
import { type ChildServer, spawnServer } from './child.js';

export async function serveDataDir(
  dataDir: string,
  adminKey: string,
  options: { env?: Record<string, string>; startTimeoutMs?: number } = {},
): Promise<ChildServer> {
  return spawnServer({
    name: 'gateway',
    script: 'src/main.ts',
    env: { DATA_DIR: dataDir, ADMIN_API_KEY: adminKey, LOG_LEVEL: 'warn', DEFAULT_ENGINE: 'sandbox', ...options.env },
    healthPath: '/health',
    // A large log's first start checks its read models: longer than a fresh DATA_DIR's.
    startTimeoutMs: options.startTimeoutMs ?? 120_000,
  });
}
