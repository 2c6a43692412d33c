/**
 * A store whose writes fail while `failing` is set, the way SQLite fails on a full disk
 * (SqliteEventStore turns a failed commit into a StoreUnavailableError); reads keep working.
 */
import { DelegatingEventStore } from '../../src/eventstore/delegating-store.js';
import {
  type AppendOptions,
  type AppendResult,
  type NewEvent,
  type Snapshot,
  type SnapshotWriteOptions,
  StoreUnavailableError,
} from '../../src/eventstore/event-store.js';

export class FailingWritesStore extends DelegatingEventStore {
  failing = false;
  /** Also refuses the appends to the streams this says (asked once per append). */
  refusing: ((streamId: string) => boolean) | undefined;
  /** Writes refused so far. */
  refused = 0;

  private refuse(): never {
    this.refused += 1;
    const cause = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    throw new StoreUnavailableError(`append failed: ${cause.message}`, { cause });
  }

  override async append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    if (this.failing || this.refusing?.(streamId)) this.refuse();
    return this.inner.append(streamId, events, options);
  }

  override async saveSnapshot(streamId: string, snapshot: Snapshot, options?: SnapshotWriteOptions): Promise<void> {
    if (this.failing) this.refuse();
    return this.inner.saveSnapshot(streamId, snapshot, options);
  }

  override async deleteSnapshot(streamId: string, options?: SnapshotWriteOptions): Promise<void> {
    if (this.failing) this.refuse();
    return this.inner.deleteSnapshot(streamId, options);
  }
}
