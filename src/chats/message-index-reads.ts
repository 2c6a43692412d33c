/**
 * The message index's heavy reads (a chat's page of messages, as JSON text made by SQLite), as the reader threads
 * run them (src/storage/reader-threads.ts; ./message-index-reader-thread.ts is a thread's entry) and as the main
 * thread runs them when no thread is ready: one set of functions for both. A chat list stays on the event loop: its
 * SQL is a fifth of what the request costs, and on two cores the hop made its p99 worse (docs/notes/performance.md).
 */
import type { MessageIndexQueries } from './message-index-queries.js';

/** `queries`: the thread's own on its read-only connection, or the message index's on the event loop's. */
export function messageIndexReads(queries: Pick<MessageIndexQueries, 'messagesJson'>) {
  return {
    messagesJson: (...args: Parameters<MessageIndexQueries['messagesJson']>) => queries.messagesJson(...args),
  };
}

export type MessageIndexReads = ReturnType<typeof messageIndexReads>;

/** The entry module each reader thread of the message index runs. */
export const MESSAGE_INDEX_READER_ENTRY = new URL(
  `./message-index-reader-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);
