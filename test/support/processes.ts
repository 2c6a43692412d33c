/**
 * Child processes the tests start (gateways), so that none outlives its test file: a test that timed out
 * while its gateway ran, or one that failed to become healthy, still has it killed (test/support/setup.ts),
 * and, as a last resort, when the test worker exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { nodeArgumentsFor } from './entry-command.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const live = new Set<ChildProcess>();
let hooked = false;

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

export function trackChild(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const orphan of live) orphan.kill('SIGKILL');
    });
  }
}

/** SIGKILL to every tracked child still running; resolves once they are gone. */
export async function killTrackedChildren(): Promise<void> {
  await Promise.all(
    [...live].map(async (child) => {
      if (!running(child)) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

/**
 * Runs a TypeScript `script` of the repository (its build, or through tsx: entry-command.ts) in a child process to
 * its end, 60 s at most: its exit status and output. Never spawnSync: it stops the test worker's event loop for the
 * child's whole life, and vitest's calls from the worker to the runner that were waiting meanwhile time out after
 * 60 s, failing the run ("Timeout calling onTaskUpdate") though every test passed; and a gateway in the test's
 * process goes on answering meanwhile.
 */
export async function runToEnd(
  script: string,
  env: NodeJS.ProcessEnv,
  options: { args?: string[]; uid?: number } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgumentsFor(script), ...(options.args ?? [])], {
    cwd: ROOT,
    env,
    timeout: 60_000,
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
  });
  trackChild(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stdout, stderr };
}
