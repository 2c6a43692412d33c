/**
 * The log's followers (the API's read models among them) held behind it (issue 36): a batch that records a message
 * `sent` reaches them only once the test has asked the gateway about that message and the gateway waits for the
 * read models (their wait's timer is set on the gateway's clock: `readModelsWaitClock`), or has answered: so they
 * are behind, for certain, when a request about a sent message arrives. A gate, not a delay: no lag to guess that
 * a loaded machine outruns.
 */
import { DelegatingEventStore } from '../../../src/eventstore/delegating-store.js';
import { type Clock, systemClock } from '../../../src/time/clock.js';
import type { EventStore, StoredEvent, SubscribeOptions, Subscription } from '../../../src/eventstore/event-store.js';

export const recordsSent = (event: StoredEvent) =>
  event.type === 'MessageStatusChanged' && (event.data as { status: string }).status === 'sent';

export class HeldFollowersStore extends DelegatingEventStore {
  private readonly decided = new Map<string, { done: Promise<void>; release: () => void }>();
  /** The messages whose `sent` is held (others, such as an edit's own message, pass). */
  private readonly held = new Set<string>();
  /** Messages the test has asked about, whose batches the gateway's next deciding read lets through. */
  private readonly asked = new Set<string>();

  /** `holds`: whether the subscriber calling subscribe() is held (asked inside it, so its stack names the caller). */
  constructor(
    inner: EventStore,
    private readonly holds: () => boolean = () => true,
  ) {
    super(inner);
  }

  /** Holds the `sent` of these messages, each until the test asks about it. */
  hold(waMessageIds: Iterable<string>): void {
    for (const waMessageId of waMessageIds) this.held.add(waMessageId);
  }

  /** The test asks the gateway about this message now. */
  asking(waMessageId: string): void {
    this.asked.add(waMessageId);
  }

  /** Lets through the batches that hold this message's `sent`. */
  release(waMessageId: string): void {
    this.decision(waMessageId).release();
  }

  /** The gateway waits for its read models: what the test has asked about so far is let through. */
  releaseAsked(): void {
    for (const waMessageId of this.asked) this.release(waMessageId);
    this.asked.clear();
  }

  override subscribe(options?: SubscribeOptions): Subscription {
    const inner = this.inner.subscribe(options);
    if (!this.holds()) return inner;
    const decision = (waMessageId: string) => this.decision(waMessageId).done;
    const held = (event: StoredEvent) =>
      recordsSent(event) && this.held.has((event.data as { waMessageId: string }).waMessageId);
    let closed = () => {};
    const closing = new Promise<void>((resolve) => (closed = resolve));
    return {
      // A batch held at close is let go: the subscriber's loop ends.
      close: () => (closed(), inner.close()),
      async *[Symbol.asyncIterator]() {
        for await (const batch of inner) {
          const sent = batch.filter(held).map((event) => (event.data as { waMessageId: string }).waMessageId);
          if (sent.length > 0) await Promise.race([Promise.all(sent.map(decision)), closing]);
          yield batch;
        }
      },
    };
  }

  private decision(waMessageId: string) {
    let decision = this.decided.get(waMessageId);
    if (!decision) {
      let release = () => {};
      const done = new Promise<void>((resolve) => (release = resolve));
      decision = { done, release: () => release() };
      this.decided.set(waMessageId, decision);
    }
    return decision;
  }
}

/** The system's clock, telling `onWait` when the read models' wait (src/projections/projection-runner.ts) sets its timer. */
export function readModelsWaitClock(onWait: () => void): Clock {
  return {
    ...systemClock,
    setTimeout(callback, ms) {
      // Set synchronously inside waitFor: the stack names it.
      if (/\bwaitFor\b/.test(new Error().stack ?? '')) onWait();
      return systemClock.setTimeout(callback, ms);
    },
  };
}
