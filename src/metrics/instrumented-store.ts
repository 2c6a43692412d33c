import { DelegatingEventStore } from '../eventstore/delegating-store.js';
import {
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type NewEvent,
  WrongExpectedRevisionError,
} from '../eventstore/event-store.js';
import type { Metrics } from './metrics.js';

/** The store with append latency and failures measured; everything else is passed straight through. */
export class InstrumentedStore extends DelegatingEventStore {
  constructor(
    inner: EventStore,
    private readonly metrics: Metrics,
    /** Told of every append's outcome (the error when it failed): health watches for a full disk. */
    private readonly onAppend?: (error?: unknown) => void,
  ) {
    super(inner);
  }

  override async append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    const stop = this.metrics.appendDuration.startTimer();
    try {
      const result = await this.inner.append(streamId, events, options);
      stop();
      this.onAppend?.();
      return result;
    } catch (error) {
      this.onAppend?.(error);
      this.metrics.appendFailures.inc({ reason: error instanceof WrongExpectedRevisionError ? 'conflict' : 'error' });
      throw error;
    }
  }
}
