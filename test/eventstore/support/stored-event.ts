import type { StoredEvent } from '../../../src/eventstore/event-store.js';

/** A stored event at `position` (revision the same), of type `T` with no data: for tests of the log's readers. */
export const storedEvent = (position: number, streamId = 's'): StoredEvent => ({
  id: `e${position}`,
  streamId,
  revision: position,
  position,
  type: 'T',
  data: {},
  metadata: {},
  createdAt: new Date(0),
});
