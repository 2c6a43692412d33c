/** How snapshots are kept on EventStoreDB: one stream per snapshotted stream, its latest event the snapshot. */
import type { EventStoreDBClient } from '@eventstore/db-client';
import type { Snapshot, StoredEvent } from '../event-store.js';

export const SNAPSHOT_EVENT_TYPE = 'Snapshot';
/** The last event of a snapshot stream whose snapshot was deleted (deleteSnapshot). */
export const SNAPSHOT_DELETED_EVENT_TYPE = 'SnapshotDeleted';
/** Snapshot streams whose metadata is known to be set; beyond this many the memory is forgotten. */
const SNAPSHOT_STREAMS_REMEMBERED = 10_000;

/** The snapshot a snapshot stream's last event holds, or null (none, deleted, or not a snapshot). */
export function snapshotIn<State>(event: StoredEvent | undefined): Snapshot<State> | null {
  if (!event || event.type === SNAPSHOT_DELETED_EVENT_TYPE) return null;
  const data = event.data as { revision?: unknown; state?: unknown } | null;
  if (!data || typeof data.revision !== 'number') return null;
  return { revision: data.revision, state: data.state as State };
}

/** Snapshot streams whose maxCount metadata is known to be set (by this process or an earlier one). */
export class SnapshotStreamSetup {
  private readonly ready = new Map<string, Promise<void>>();

  /** maxCount 1 keeps only the latest snapshot readable; scavenging then reclaims the older ones. */
  ensure(
    stream: string,
    run: (what: string, operation: (client: EventStoreDBClient) => Promise<void>) => Promise<void>,
  ): Promise<void> {
    let ready = this.ready.get(stream);
    if (!ready) {
      // Forgetting only costs one metadata read per stream: a long-running gateway must not grow without bound.
      if (this.ready.size >= SNAPSHOT_STREAMS_REMEMBERED) this.ready.clear();
      ready = run(`set up snapshot stream ${stream}`, async (client) => {
        // Read first, so a restart does not add a metadata event per stream and per start.
        const { metadata } = await client.getStreamMetadata(stream);
        if (metadata?.maxCount !== 1) await client.setStreamMetadata(stream, { ...metadata, maxCount: 1 });
      });
      this.ready.set(stream, ready);
      ready.catch(() => this.ready.delete(stream));
    }
    return ready;
  }
}
