/**
 * A store whose writes fail while `failing` is set, the way SQLite fails on a full disk
 * (SqliteEventStore turns a failed commit into a StoreUnavailableError); reads keep working.
 */
import { DelegatingEventStore } from '../../src/eventstore/delegating-store.js';
import { type AppendResult, type ExpectedRevision, type NewEvent, type Snapshot, StoreUnavailableError } from '../../src/eventstore/event-store.js';

export class FailingWritesStore extends DelegatingEventStore {
  failing = false;
  /** Writes refused so far. */
  refused = 0;

  private refuse(): never {
    this.refused += 1;
    const cause = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    throw new StoreUnavailableError(`append failed: ${cause.message}`, { cause });
  }

  override async append(streamId: string, events: readonly NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult> {
    if (this.failing) this.refuse();
    return this.inner.append(streamId, events, options);
  }

  override async saveSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
    if (this.failing) this.refuse();
    return this.inner.saveSnapshot(streamId, snapshot);
  }

  override async deleteSnapshot(streamId: string): Promise<void> {
    if (this.failing) this.refuse();
    return this.inner.deleteSnapshot(streamId);
  }
}
