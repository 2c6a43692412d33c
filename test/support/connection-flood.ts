/**
 * An attacker holding connections open from one address, in a process of its own (so that its sockets do
 * not slow the test's own client): idle connections send nothing, slow ones a request line and then a
 * header line a second (slowloris); it keeps every connection the server lets it keep. With `reopenMs`,
 * one the server closes is opened again that long after (a connect flood as well).
 * Started by `startFlood`; run as a script it takes `port idle slow from reopenMs`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { type Socket, connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { trackChild } from './processes.js';

export interface Flood {
  /** Stops the flood and waits for its process to end (its sockets close with it). */
  stop(): Promise<void>;
}

/** Starts the flood and resolves once each of its connections has connected or been refused once. */
export async function startFlood(
  port: number,
  counts: { idle: number; slow: number },
  options: { from?: string; reopenMs?: number } = {},
): Promise<Flood> {
  const args = [port, counts.idle, counts.slow, options.from ?? '127.0.0.2', options.reopenMs ?? -1].map(String);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  trackChild(child);
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the flood exited with ${code} before it was ready`)));
  });
  return {
    async stop() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

function flood(port: number, idle: number, slow: number, from: string, reopenMs: number): void {
  const open = (kind: 'idle' | 'slow'): Promise<void> => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    socket.on('error', () => undefined);
    let drip: NodeJS.Timeout | undefined;
    socket.once('connect', () => {
      if (kind !== 'slow') return;
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
      drip = setInterval(() => socket.write('X-Drip: 1\r\n'), 1_000);
    });
    socket.once('close', () => {
      clearInterval(drip);
      if (reopenMs >= 0) setTimeout(() => void open(kind), reopenMs);
    });
    return settled(socket);
  };
  const first = [
    ...Array.from({ length: idle }, () => open('idle')),
    ...Array.from({ length: slow }, () => open('slow')),
  ];
  void Promise.all(first).then(() => process.stdout.write('ready\n'));
}

/** Resolves once the socket has connected, or closed before it could (a refusal is a reset: no rejection). */
export function settled(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.once('connect', () => resolve());
    socket.once('close', () => resolve());
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [port, idle, slow] = process.argv.slice(2, 5).map(Number);
  flood(port, idle, slow, process.argv[5] ?? '127.0.0.2', Number(process.argv[6] ?? -1));
}
