/**
 * Child processes the tests start (gateways), so that none outlives its test file: a test that timed out
 * while its gateway ran, or one that failed to become healthy, still has it killed (test/support/setup.ts),
 * and, as a last resort, when the test worker exits.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

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
