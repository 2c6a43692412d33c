/** How an event is a row of the SQLite store's `events` table, and back. */
import type { NewEvent, StoredEvent } from '../event-store.js';

/** An event's data and metadata as the columns hold them (metadata NULL when empty). */
export interface EventJson {
  data: string;
  metadata: string | null;
}

/** data and metadata of each event as JSON. */
export function toJson(events: readonly NewEvent[]): EventJson[] {
  return events.map((event) => {
    const metadata = event.metadata ?? {};
    // Most events carry no metadata: NULL then saves a JSON.parse per event on every read.
    return {
      data: JSON.stringify(event.data ?? null),
      metadata: Object.keys(metadata).length > 0 ? JSON.stringify(metadata) : null,
    };
  });
}

/** The columns of an event, in the order fromRawRow reads them. */
export const COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, created_at';

export type RawEventRow = [number, string, number, string, string, string, string | null, number];

export function fromRawRow([
  position,
  streamId,
  revision,
  id,
  type,
  data,
  metadata,
  createdAt,
]: RawEventRow): StoredEvent {
  return {
    id,
    streamId,
    revision,
    position,
    type,
    data: JSON.parse(data) as StoredEvent['data'],
    metadata: metadata ? (JSON.parse(metadata) as StoredEvent['metadata']) : {},
    createdAt: new Date(createdAt),
  };
}
