/** The store's live subscription to $all (eventstoredb-event-store.ts, subscribe). */
import { type AllStreamResolvedEvent, type AllStreamSubscription } from '@eventstore/db-client';
import { StoreUnavailableError, type StoredEvent, type Subscription } from '../event-store.js';
import { isVisible, toStoredEvent, toStoreError } from './eventstoredb-mapping.js';

/** A subscription batch never exceeds this, so one slow batch cannot hold a consumer for long. */
const MAX_BATCH = 500;

/**
 * One $all subscription. The client's subscription is a Readable in paused mode: every wake-up drains
 * what is already buffered into one batch (at most MAX_BATCH) and yields it at once, so events that
 * arrive together travel together but none waits for company.
 */
export class EventStoreDbSubscription implements Subscription {
  private closed = false;
  private closing: Promise<void> | undefined;
  private iterated = false;
  private ended = false;
  private failure: unknown;
  private wake: (() => void) | undefined;

  constructor(
    private readonly source: AllStreamSubscription,
    private last: number,
    private readonly detach: () => void,
  ) {
    // Permanent listeners: an 'error' without one would crash the process.
    source.on('readable', () => this.notify());
    source.on('end', () => this.finish());
    source.on('close', () => this.finish());
    source.on('error', (error: Error) => {
      this.failure ??= error;
      this.notify();
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<readonly StoredEvent[]> {
    if (this.iterated) throw new Error('a subscription can be iterated only once');
    this.iterated = true;
    try {
      while (!this.closed) {
        const batch = this.drain();
        if (batch.length > 0) {
          yield batch;
          continue;
        }
        if (this.failure !== undefined) throw toStoreError(this.failure, 'subscription to $all');
        if (this.ended) throw new StoreUnavailableError('the event store ended the subscription to $all');
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
      }
    } finally {
      await this.close();
    }
  }

  private drain(): StoredEvent[] {
    const batch: StoredEvent[] = [];
    while (batch.length < MAX_BATCH) {
      const resolved = this.source.read() as AllStreamResolvedEvent | null;
      if (resolved === null) break;
      const event = resolved.event;
      if (!event || !isVisible(event.streamId, event.type)) continue;
      const stored = toStoredEvent(event, true);
      // The server already starts after `last`; this only guards the checkpoint contract.
      if (stored.position <= this.last) continue;
      this.last = stored.position;
      batch.push(stored);
    }
    return batch;
  }

  private notify(): void {
    this.wake?.();
  }

  private finish(): void {
    this.ended = true;
    this.notify();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.detach();
      this.notify();
      // unsubscribe cancels the gRPC call; the piped Readable does not end by itself, so destroy it.
      await this.source.unsubscribe().catch(() => undefined);
      this.source.destroy();
    })();
    return this.closing;
  }
}
