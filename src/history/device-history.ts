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
export async function readDeviceHistory(
  store: EventStore,
  index: DeviceHistoryIndex,
  deviceId: string,
  from: number,
  limit: number,
): Promise<HistoryPage> {
  const perStream = await Promise.all(
    index.streamsOf(deviceId).map((streamId) => readFrom(store, streamId, from, limit + 1)),
  );
  return pageOf(
    perStream.flat().sort((a, b) => a.position - b.position),
    limit,
  );
}

/**
 * The same timeline newest first: from the event at `from` (or the newest, when undefined) back towards
 * the first; `next` is then the position of the next older event.
 */
export async function readDeviceHistoryBackwards(
  store: EventStore,
  index: DeviceHistoryIndex,
  deviceId: string,
  from: number | undefined,
  limit: number,
): Promise<HistoryPage> {
  const perStream = await Promise.all(
    index.streamsOf(deviceId).map((streamId) => readBackFrom(store, streamId, from, limit + 1)),
  );
  return pageOf(
    perStream.flat().sort((a, b) => b.position - a.position),
    limit,
  );
}

/** The first `limit` of the merged events, redacted, and where the next page starts. */
function pageOf(merged: StoredEvent[], limit: number): HistoryPage {
  const items = merged.slice(0, limit).map((event) => ({
    position: event.position,
    stream: event.streamId,
    revision: event.revision,
    type: event.type,
    data: redactSecrets(event.data),
    createdAt: event.createdAt.toISOString(),
  }));
  return { items, next: merged.length > limit ? merged[limit].position : null };
}

/** Up to `count` events of a stream whose positions are at least `from`. */
async function readFrom(store: EventStore, streamId: string, from: number, count: number): Promise<StoredEvent[]> {
  const [last] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
  if (!last || last.position < from) return [];
  return store.readStream(streamId, {
    fromRevision: await firstRevisionAtOrAfter(store, streamId, from, last),
    maxCount: count,
  });
}

/** Up to `count` events of a stream whose positions are at most `from` (undefined: any), newest first. */
async function readBackFrom(
  store: EventStore,
  streamId: string,
  from: number | undefined,
  count: number,
): Promise<StoredEvent[]> {
  const [last] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
  if (!last) return [];
  const newest =
    from === undefined || last.position <= from
      ? last.revision
      : (await firstRevisionAtOrAfter(store, streamId, from + 1, last)) - 1;
  if (newest < 0) return [];
  return store.readStream(streamId, { direction: 'backwards', fromRevision: newest, maxCount: count });
}

/** The stream's first revision whose position is at least `position`, found by bisecting; `last` (its last event) is at or past it. */
async function firstRevisionAtOrAfter(
  store: EventStore,
  streamId: string,
  position: number,
  last: StoredEvent,
): Promise<number> {
  let low = 0;
  let high = last.revision;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const [probe] = await store.readStream(streamId, { fromRevision: middle, maxCount: 1 });
    if (probe && probe.position >= position) high = middle;
    else low = middle + 1;
  }
  return low;
}
