/**
 * The newest events of the log, kept in memory for several readers at once: fed by one live subscription
 * (follow-all.ts), it hands each reader that is caught up the events after its position without reading the
 * log again, so K readers at the head cost one read of each new page instead of K. It keeps at most
 * `capacity` events; a reader that fell further behind than that is told to read the log itself (and comes
 * back here once it has caught up). The events are shared: readers must not change them.
 */
import type { StoredEvent } from './event-store.js';

export class LogTail {
  /** The events kept, in log order; the kept ones start at `first`. */
  private events: StoredEvent[] = [];
  private first = 0;
  /**
   * Every event of the log after this position, up to `head`, is kept (exclusive; an event's position, or the
   * position the subscription started after).
   */
  private keptAfter: number;
  /** The position of the newest event kept (or `keptAfter` while none is). */
  head: number;

  /**
   * @param after the position the feeding subscription starts after: the events after it are all to come here.
   * @param capacity the most events kept (at least 1).
   */
  constructor(
    after: number,
    private readonly capacity: number,
  ) {
    this.keptAfter = after;
    this.head = after;
    if (!(capacity >= 1)) throw new RangeError(`a log tail keeps at least one event, not ${capacity}`);
  }

  /**
   * The subscription's next batch, in log order with no gap after what was added before. Events at or before
   * the head (a batch handed again after the subscription was made again) are left out.
   */
  add(batch: readonly StoredEvent[]): void {
    for (const event of batch) if (event.position > this.head) this.events.push(event);
    if (this.events.length === this.first) return;
    this.head = this.events[this.events.length - 1].position;
    const excess = this.events.length - this.first - this.capacity;
    if (excess > 0) {
      this.first += excess;
      this.keptAfter = this.events[this.first - 1].position;
    }
    // Drops what was let go once it is as long as what is kept: each event is copied at most once on average.
    if (this.first >= this.capacity) {
      this.events = this.events.slice(this.first);
      this.first = 0;
    }
  }

  /** How many events it keeps. */
  get size(): number {
    return this.events.length - this.first;
  }

  /** Forgets what it keeps: the events to come are those after `after` (nobody read the ones in between). */
  restartAfter(after: number): void {
    if (this.events.length > 0) this.events = [];
    this.first = 0;
    this.keptAfter = after;
    this.head = after;
  }

  /**
   * Up to `maxCount` events after `after`, in log order: [] when none newer has come yet (wait for the next
   * batch), undefined when some of those after it are no longer kept (read them from the log).
   */
  read(after: number, maxCount: number): readonly StoredEvent[] | undefined {
    if (after < this.keptAfter) return undefined;
    if (after >= this.head) return [];
    // The first kept event past `after` (positions need not be consecutive: EventStoreDB's are commit positions).
    let low = this.first;
    let high = this.events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.events[middle].position <= after) low = middle + 1;
      else high = middle;
    }
    return this.events.slice(low, low + maxCount);
  }
}
