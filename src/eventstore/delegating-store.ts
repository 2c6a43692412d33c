import type {
  AppendOptions,
  AppendResult,
  EventStore,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  Snapshot,
  SnapshotWriteOptions,
  StoredEvent,
  SubscribeOptions,
  Subscription,
} from './event-store.js';

/**
 * A store that passes every call to another one: decorators (upcasting, metrics, test doubles) extend it
 * and override only what they change.
 */
export abstract class DelegatingEventStore implements EventStore {
  constructor(protected readonly inner: EventStore) {}

  get kind() {
    return this.inner.kind;
  }

  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    return this.inner.append(streamId, events, options);
  }

  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]> {
    return this.inner.readStream(streamId, options);
  }

  readAll(options?: ReadAllOptions): Promise<StoredEvent[]> {
    return this.inner.readAll(options);
  }

  subscribe(options?: SubscribeOptions): Subscription {
    return this.inner.subscribe(options);
  }

  saveSnapshot(streamId: string, snapshot: Snapshot, options?: SnapshotWriteOptions): Promise<void> {
    return this.inner.saveSnapshot(streamId, snapshot, options);
  }

  loadSnapshot<State = unknown>(streamId: string): Promise<Snapshot<State> | null> {
    return this.inner.loadSnapshot<State>(streamId);
  }

  deleteSnapshot(streamId: string, options?: SnapshotWriteOptions): Promise<void> {
    return this.inner.deleteSnapshot(streamId, options);
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
