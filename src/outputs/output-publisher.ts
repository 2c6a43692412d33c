/**
 * What an output's subscriber publishes through (output-subscriber.ts): a batch of messages, in order, resolved
 * once the broker has confirmed all of them (AMQP publisher confirms, JetStream acks), rejected otherwise. A
 * publisher connects when it is first used and after a failure: the subscriber then publishes the whole batch
 * again on a fresh connection (duplicates carry the same message id). Implementations: amqp-publisher.ts,
 * nats-publisher.ts.
 */
import type { OutgoingMessage } from './output-message.js';

export interface Publisher {
  publish(messages: readonly OutgoingMessage[]): Promise<void>;
  /** Ends the connection; the next publish connects again. Never throws. */
  close(): Promise<void>;
}

/** How long a connection attempt, or the confirms of one batch, may take before the try counts as failed. */
export const PUBLISH_TIMEOUT_MS = 10_000;

/** Rejects with `message` after `ms` unless `promise` settles first. */
export async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
