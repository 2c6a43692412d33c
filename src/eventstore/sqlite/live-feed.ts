import type { StoredEvent, Subscription } from '../event-store.js';

/** A live subscriber may hold this many events in memory before it falls back to reading the file. */
const MAX_BUFFERED_EVENTS = 10_000;

type ReadPage = (after: number) => StoredEvent[];

/**
 * Fans committed events out to subscriptions in the same process. A subscription reads the file until
 * it has seen everything, then switches to the events handed over at commit time. The switch and the
 * commit both run synchronously on the one JavaScript thread, so nothing committed can fall between the
 * last read and the first live batch: no gap, no duplicate, and no polling.
 */
export class LiveFeed {
  private readonly subscriptions = new Set<FeedSubscription>();

  get size(): number {
    return this.subscriptions.size;
  }

  publish(events: readonly StoredEvent[]): void {
    for (const subscription of this.subscriptions) subscription.offer(events);
  }

  subscribe(after: number, readPage: ReadPage): Subscription {
    const subscription = new FeedSubscription(after, readPage, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
  }

  close(): void {
    for (const subscription of [...this.subscriptions]) void subscription.close();
  }
}

class FeedSubscription implements Subscription {
  private live = false;
  private buffered: (readonly StoredEvent[])[] = [];
  private bufferedCount = 0;
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(
    private last: number,
    private readonly readPage: ReadPage,
    private readonly detach: () => void,
  ) {}

  offer(offered: readonly StoredEvent[]): void {
    if (!this.live) return; // still catching up: the file has these events
    // Several writers: the file may have shown some of these before they were fed (see SqliteEventStore's tail).
    const seen = this.lastOffered();
    const events = offered[0].position > seen ? offered : offered.filter((event) => event.position > seen);
    if (events.length === 0) return;
    this.buffered.push(events);
    this.bufferedCount += events.length;
    if (this.bufferedCount > MAX_BUFFERED_EVENTS) {
      // A slow consumer: drop the copies and read the file again from where it is.
      this.live = false;
      this.buffered = [];
      this.bufferedCount = 0;
    }
    this.wake?.();
  }

  private lastOffered(): number {
    const batch = this.buffered[this.buffered.length - 1];
    return batch ? batch[batch.length - 1].position : this.last;
  }

  /**
   * Not an async generator: a suspended generator keeps its registers, and with them the batch it yielded last (a
   * whole history chunk) until the next one comes. Each next() is a call of its own, which holds nothing once it
   * has answered.
   */
  [Symbol.asyncIterator](): AsyncIterator<readonly StoredEvent[]> {
    return {
      next: () => this.next(),
      return: () => {
        this.end();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  private async next(): Promise<IteratorResult<readonly StoredEvent[]>> {
    try {
      while (!this.closed) {
        if (!this.live) {
          const page = this.readPage(this.last);
          if (page.length === 0) {
            this.live = true;
            continue;
          }
          this.last = page[page.length - 1].position;
          return { done: false, value: page };
        }
        if (this.buffered.length > 0) {
          const batch = this.buffered.length === 1 ? this.buffered[0] : this.buffered.flat();
          this.buffered = [];
          this.bufferedCount = 0;
          this.last = batch[batch.length - 1].position;
          return { done: false, value: batch };
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } catch (error) {
      this.end();
      throw error;
    }
    this.end();
    return { done: true, value: undefined };
  }

  private end(): void {
    this.closed = true;
    this.detach();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.detach();
    this.wake?.();
  }
}
