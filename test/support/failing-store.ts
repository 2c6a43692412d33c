/**
 * A store whose writes fail while `failing` is set, the way SQLite fails on a full disk
 * (SqliteEventStore turns a failed commit into a StoreUnavailableError); reads keep working.
 */
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type Snapshot,
  StoreUnavailableError,
  type SubscribeOptions,
} from '../../src/eventstore/event-store.js';

export class FailingWritesStore implements EventStore {
  failing = false;
  /** Writes refused so far. */
  refused = 0;

  constructor(private readonly inner: EventStore) {}

  get kind() {
    return this.inner.kind;
  }

  private refuse(): never {
    this.refused += 1;
    const cause = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    throw new StoreUnavailableError(`append failed: ${cause.message}`, { cause });
  }

  async append(streamId: string, events: readonly NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult> {
    if (this.failing) this.refuse();
    return this.inner.append(streamId, events, options);
  }

  async saveSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
    if (this.failing) this.refuse();
    return this.inner.saveSnapshot(streamId, snapshot);
  }

  async deleteSnapshot(streamId: string): Promise<void> {
    if (this.failing) this.refuse();
    return this.inner.deleteSnapshot(streamId);
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

  loadSnapshot<State = unknown>(streamId: string) {
    return this.inner.loadSnapshot<State>(streamId);
  }

  ping() {
    return this.inner.ping();
  }

  close() {
    return this.inner.close();
  }
}
