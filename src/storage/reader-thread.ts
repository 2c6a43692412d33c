/**
 * The reader thread's side of ./reader-threads.ts: opens the file the pool names, makes the queries and
 * answers each call with what its query returns (or says it failed: the main thread then runs it itself).
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { ReadAnswer, ReadCall, ReadQueries } from './reader-threads.js';

/** Called by a reader thread's entry module with how to open the file and make its queries. */
export function serveReadQueries(queriesOf: (file: string) => ReadQueries): void {
  if (isMainThread || !parentPort) throw new Error('serveReadQueries runs in a reader thread (ReaderThreads)');
  const port = parentPort;
  const queries = queriesOf((workerData as { file: string }).file);
  port.on('message', ({ id, name, args }: ReadCall) => {
    let answer: ReadAnswer;
    try {
      answer = { id, value: (queries[name] as (...args: unknown[]) => unknown)(...args) };
    } catch (error) {
      answer = { id, failed: String(error) };
    }
    port.postMessage(answer);
  });
  port.postMessage({ ready: true } satisfies ReadAnswer);
}
