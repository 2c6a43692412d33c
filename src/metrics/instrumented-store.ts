import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type Snapshot,
  type SubscribeOptions,
  WrongExpectedRevisionError,
} from '../eventstore/event-store.js';
import type { Metrics } from './metrics.js';

/** The store with append latency and failures measured; everything else is passed straight through. */
export class InstrumentedStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly metrics: Metrics,
    /** Told of every append's outcome (the error when it failed): health watches for a full disk. */
    private readonly onAppend?: (error?: unknown) => void,
  ) {}

  get kind() {
    return this.inner.kind;
  }

  async append(streamId: string, events: readonly NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult> {
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

  readStream(streamId: string, options?: ReadStreamOptions) {
    return this.inner.readStream(streamId, options);
  }

  readAll(options?: ReadAllOptions) {
    return this.inner.readAll(options);
  }

  subscribe(options?: SubscribeOptions) {
    return this.inner.subscribe(options);
  }

  saveSnapshot(streamId: string, snapshot: Snapshot) {
    return this.inner.saveSnapshot(streamId, snapshot);
  }

  loadSnapshot<State = unknown>(streamId: string) {
    return this.inner.loadSnapshot<State>(streamId);
  }

  deleteSnapshot(streamId: string) {
    return this.inner.deleteSnapshot(streamId);
  }

  ping() {
    return this.inner.ping();
  }

  close() {
    return this.inner.close();
  }
}
