import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import type { DeviceHistoryIndex, HistoryEntry } from '../projections/device-history-index.js';
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
 * A device's timeline across all its streams, in log order, redacted. The index says where the events
 * are; the store gives them. Within one page the events of one stream are consecutive revisions (every
 * event of a device's stream is indexed), so each stream costs one read.
 */
export async function readDeviceHistory(store: EventStore, index: DeviceHistoryIndex, deviceId: string, from: number, limit: number): Promise<HistoryPage> {
  const entries = index.page(deviceId, from, limit + 1);
  const page = entries.slice(0, limit);
  const byStream = new Map<string, HistoryEntry[]>();
  for (const entry of page) byStream.set(entry.streamId, [...(byStream.get(entry.streamId) ?? []), entry]);
  const events = new Map<string, StoredEvent>();
  const key = (streamId: string, revision: number) => `${revision}@${streamId}`;
  await Promise.all(
    [...byStream].map(async ([streamId, inStream]) => {
      const first = inStream[0]!.revision;
      const last = inStream[inStream.length - 1]!.revision;
      for (const event of await store.readStream(streamId, { fromRevision: first, maxCount: last - first + 1 })) {
        events.set(key(event.streamId, event.revision), event);
      }
    }),
  );
  const items = page.flatMap((entry) => {
    const event = events.get(key(entry.streamId, entry.revision));
    if (!event) return [];
    return [{ position: entry.position, stream: event.streamId, revision: event.revision, type: event.type, data: redactSecrets(event.data), createdAt: event.createdAt.toISOString() }];
  });
  return { items, next: entries.length > limit ? entries[limit]!.position : null };
}

/** Every page of a device's history, for the command-line timeline. */
export async function* allDeviceHistory(store: EventStore, index: DeviceHistoryIndex, deviceId: string): AsyncGenerator<HistoryItem> {
  let from: number | null = 0;
  while (from !== null) {
    const page: HistoryPage = await readDeviceHistory(store, index, deviceId, from, 500);
    yield* page.items;
    from = page.next;
  }
}
