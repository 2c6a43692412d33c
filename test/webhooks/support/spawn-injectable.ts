import { fileURLToPath } from 'node:url';
import type { NewEvent } from '../../../src/eventstore/event-store.js';
import { spawnGateway } from '../../support/child-gateway.js';
import type { ChildMessage } from './injectable-gateway.js';

const SCRIPT = fileURLToPath(new URL('./injectable-gateway.ts', import.meta.url));

export interface InjectableGateway {
  url: string;
  append(stream: string, events: NewEvent[]): Promise<number>;
  /** SIGKILL: no shutdown code runs. */
  kill(): Promise<void>;
  output(): string;
}

/** The real gateway in a child process that also appends events to its store when asked over IPC. */
export async function spawnInjectableGateway(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<InjectableGateway> {
  const gateway = await spawnGateway(dataDir, env, { script: SCRIPT, ipc: true });
  const child = gateway.process;
  const pending = new Map<number, { resolve: (position: number) => void; reject: (error: Error) => void }>();
  let seq = 0;
  child.on('message', (message: ChildMessage) => {
    const waiter = pending.get(message.seq);
    pending.delete(message.seq);
    if ('error' in message) waiter?.reject(new Error(message.error));
    else waiter?.resolve(message.position);
  });
  return {
    url: gateway.url,
    output: gateway.output,
    append(stream, events) {
      return new Promise((resolve, reject) => {
        pending.set(++seq, { resolve, reject });
        child.send({ seq, stream, events });
      });
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await gateway.kill();
    },
  };
}
