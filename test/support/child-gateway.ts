import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.js';
import { ADMIN_KEY } from './gateway.js';
import { trackChild } from './processes.js';
import { storeSettings } from './test-store.js';
import { nodeArgumentsFor } from './entry-command.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/**
 * Options for a describe whose tests start gateways in child processes: each start loads the gateway (and compiles
 * the sources with tsx where dist/ is not their build: entry-command.ts), which can take several seconds on a busy
 * shared machine, so these tests get more than the default 30 s. A deadline, not a speed target.
 */
export const CHILD_GATEWAY_TESTS = { timeout: 120_000 };

export interface ChildGateway {
  url: string;
  process: ChildProcess;
  output(): string;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  /** Another entry point that starts the real gateway (default src/main.ts). */
  script?: string;
  /** Opens an IPC channel to the child (child.send / 'message'). */
  ipc?: boolean;
  /** A command that runs the gateway's own command line given after it (unshare, a shell that never reaps it). */
  wrapper?: string[];
  /** How long it may take to answer /health (default 30 s, 90 s under GATEWAY_PROCESSES). */
  startTimeoutMs?: number;
}

/**
 * The real gateway (src/main.ts) in its own process, so that it can be killed with SIGKILL mid-work. The port comes
 * from freePort, which closes it before the child binds it: anything on the machine (another test's outgoing
 * connection, a listener on port 0) may take it in between, so a child that says its port is in use is started again
 * on another.
 */
export async function spawnGateway(
  dataDir: string,
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<ChildGateway> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnGatewayOnce(dataDir, env, options);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === PORT_ATTEMPTS) throw error;
    }
  }
}

const PORT_ATTEMPTS = 3;

/** The child stopped at start because another socket had taken its port (src/main.ts says so, exit 78). */
class PortTaken extends Error {}

async function spawnGatewayOnce(
  dataDir: string,
  env: Record<string, string>,
  options: SpawnOptions,
): Promise<ChildGateway> {
  const port = await freePort();
  // The store outlives the gateway (it is killed with SIGKILL): on EventStoreDB, a server in a process of its own.
  const store = await storeSettings(dataDir, 'child-process');
  const command = [...(options.wrapper ?? []), process.execPath, ...nodeArgumentsFor(options.script ?? 'src/main.ts')];
  const child = spawn(command[0], command.slice(1), {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_API_KEY: ADMIN_KEY,
      LOG_LEVEL: 'warn',
      ...store,
      ...env,
    },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  trackChild(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const exited = once(child, 'exit');
  // GATEWAY_PROCESSES: a primary (its projector caught up first) and workers, each loading the code.
  const startTimeoutMs = options.startTimeoutMs ?? (Number(env.GATEWAY_PROCESSES) > 1 ? 90_000 : 30_000);
  const healthy = await eventually(
    async () => {
      if (child.exitCode !== null) return 'exited';
      return (
        (await fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        )) && 'healthy'
      );
    },
    'the gateway healthy',
    startTimeoutMs,
  ).catch(() => 'late');
  if (healthy === 'exited') {
    const message = `gateway exited with ${child.exitCode}: ${output}`;
    throw env.PORT === undefined && /PORT: \S+ is already in use/.test(output)
      ? new PortTaken(message)
      : new Error(message);
  }
  if (healthy === 'late') {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`gateway did not become healthy: ${output}`);
  }
  return {
    url,
    process: child,
    output: () => output,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
