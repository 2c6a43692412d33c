import { type Config, ConfigError, loadConfig } from './config.js';
import { startGateway } from './gateway.js';
import { isPrimaryOf, runPrimary } from './cluster/primary.js';
import { createLogger } from './logger.js';
import { EX_CONFIG, explainStartFailure } from './start-failures.js';
import { tightenDataDir, usePrivateFileModes } from './storage/private-files.js';
import { applyV8Flags } from './v8-flags.js';

/**
 * Starts the gateway; a bad setting stops it with a message naming the variable, and so does a start that
 * fails for a reason a setting explains (port in use, HOST, DATA_DIR; src/start-failures.ts).
 */
async function main(): Promise<void> {
  // Before the gateway allocates: V8 applies them from here on.
  applyV8Flags();
  // Before anything is created: folders 0700, files 0600.
  usePrivateFileModes();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`configuration error: ${error.message}\n`);
    process.exit(EX_CONFIG);
  }
  try {
    await start(config);
  } catch (error) {
    const failure = explainStartFailure(error, config);
    if (!failure) throw error;
    process.stderr.write(`failed to start: ${failure.message}\n`);
    process.exit(failure.exitCode);
  }
}

async function start(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  tightenDataDir(config.dataDir);
  if (isPrimaryOf(config)) {
    await runPrimary(config, log);
    return;
  }
  const gateway = await startGateway(config, { logger: log });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    gateway.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
