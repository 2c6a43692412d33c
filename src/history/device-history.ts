import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import type { DeviceHistoryIndex } from '../projections/device-history-index.js';
import { redactSecrets } from './redact.js';

export interface HistoryItem {
  position: number;
  stream: string;
  revision: number;
  type: string;
  data: unknown;
  createdAt: string;
}

export interface HistoryPage {
  items: HistoryItem[];
  /** Pass as `from` for the next page; null when this page reached the end. */
  next: number | null;
}

/**
 * A device's timeline across all its streams, in log order, redacted: each stream is read from its first
 * event at or after `from` (found by bisecting its revisions), and the streams are merged by position.
 * Works the same on every store, since it only uses stream reads.
 */
export async function readDeviceHistory(store: EventStore, index: DeviceHistoryIndex, deviceId: string, from: number, limit: number): Promise<HistoryPage> {
  const perStream = await Promise.all(index.streamsOf(deviceId).map((streamId) => readFrom(store, streamId, from, limit + 1)));
  const merged = perStream.flat().sort((a, b) => a.position - b.position);
  const items = merged.slice(0, limit).map((event) => ({
    position: event.position,
    stream: event.streamId,
    revision: event.revision,
    type: event.type,
    data: redactSecrets(event.data),
    createdAt: event.createdAt.toISOString(),
  }));
  return { items, next: merged.length > limit ? merged[limit]!.position : null };
}

/** Up to `count` events of a stream whose positions are at least `from`. */
async function readFrom(store: EventStore, streamId: string, from: number, count: number): Promise<StoredEvent[]> {
  const [last] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
  if (!last || last.position < from) return [];
  let low = 0;
  let high = last.revision;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const [probe] = await store.readStream(streamId, { fromRevision: middle, maxCount: 1 });
    if (probe && probe.position >= from) high = middle;
    else low = middle + 1;
  }
  return store.readStream(streamId, { fromRevision: low, maxCount: count });
}
