import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { NewEvent } from '../../../src/eventstore/event-store.js';
import { freePort } from '../../support/child-gateway.js';
import { ADMIN_KEY } from '../../support/gateway.js';
import type { ChildMessage } from './injectable-gateway.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./injectable-gateway.ts', import.meta.url));

export interface InjectableGateway {
  url: string;
  append(stream: string, events: NewEvent[]): Promise<number>;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  output(): string;
}

export async function spawnInjectableGateway(dataDir: string, env: Record<string, string> = {}): Promise<InjectableGateway> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = once(child, 'exit');
  const pending = new Map<number, { resolve: (position: number) => void; reject: (error: Error) => void }>();
  let seq = 0;
  const ready = new Promise<string>((resolve, reject) => {
    child.on('message', (message: ChildMessage) => {
      if ('ready' in message) return resolve(message.ready);
      const waiter = pending.get(message.seq);
      pending.delete(message.seq);
      if ('error' in message) waiter?.reject(new Error(message.error));
      else waiter?.resolve(message.position);
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}: ${output}`)));
  });
  const url = await Promise.race([ready, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`gateway did not start: ${output}`)), 30_000).unref())]);
  return {
    url,
    output: () => output,
    append(stream, events) {
      return new Promise((resolve, reject) => {
        pending.set(++seq, { resolve, reject });
        child.send({ seq, stream, events });
      });
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
