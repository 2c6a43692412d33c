import type { Logger } from 'pino';
import type { EventStore, StoredEvent, Subscription } from './event-store.js';
import { forEachBatch } from './for-each-batch.js';

export interface FollowAllOptions {
  /** Exclusive start, as in SubscribeOptions. */
  after: number;
  /** Handles one batch; the next resubscription starts after the last event of the last batch handled. */
  onBatch: (events: readonly StoredEvent[]) => void | Promise<void>;
  log: Pick<Logger, 'warn'>;
  /** Names the consumer in the log. */
  name: string;
  minDelayMs?: number;
  maxDelayMs?: number;
}

/**
 * A subscription to the log that survives drops: a store may end any subscription (EventStoreDB drops slow
 * or disconnected subscribers, a restart ends them all), so on an error this subscribes again right after
 * the last event handled, waiting longer after each failure in a row (doubling, capped), never twice the same event.
 */
export function followAll(store: EventStore, options: FollowAllOptions): { stop(): Promise<void> } {
  const minDelay = options.minDelayMs ?? 250;
  const maxDelay = options.maxDelayMs ?? 30_000;
  let position = options.after;
  let subscription: Subscription | undefined;
  let stopped = false;
  let failures = 0;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        subscription = store.subscribe({ after: position });
        await forEachBatch(subscription, async (batch) => {
          await options.onBatch(batch);
          position = batch[batch.length - 1].position;
          failures = 0;
        });
        if (stopped) return;
        failures += 1; // ended without an error (a closed store): back off all the same
      } catch (error) {
        if (stopped) return;
        failures += 1;
        options.log.warn(
          { err: error, consumer: options.name, attempt: failures },
          'subscription to the log dropped; subscribing again',
        );
      }
      const delay = Math.min(minDelay * 2 ** Math.max(0, failures - 1), maxDelay);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await subscription?.close();
      await loop;
    },
  };
}
