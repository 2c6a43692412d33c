/**
 * The EventStoreDB / KurrentDB adapter of the event store port, over the gRPC client `@eventstore/db-client@6`.
 *
 * Positions. The port's `position` is the event's commit position in the transaction log, as a number.
 * Since the gRPC protocol (v20) every appended event is written as its own self-committing prepare record,
 * so an event's commit position is the byte offset of that record: unique per event, strictly increasing
 * in $all order, and equal to its prepare position (which is why `{ commit: p, prepare: p }` is a valid read
 * or subscription start). The number is exact while the log is below 2^53 bytes (8 PiB), far beyond any
 * single-node log; a larger value throws instead of silently losing precision. Events written by the
 * legacy TCP explicit-transaction API share one commit position and are not supported.
 *
 * Filtering. $all holds the server's own events; readers of the port never see system streams (`$…`, which
 * includes the `$$…` stream metadata streams), events with a system type (`$…`) or the snapshot streams.
 * Subscriptions filter on the server by stream name; the v6 client's readAll has no filter, so pages are
 * filtered here and topped up until they hold `maxCount` visible events or reach the end of $all.
 *
 * Requires a gRPC server (EventStoreDB ≥ 22.10 or any KurrentDB), which reports event positions on stream
 * reads and idempotent appends.
 */
import {
  BACKWARDS,
  CancelledError,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  FORWARDS,
  NotLeaderError,
  START,
  StreamNotFoundError,
  TimeoutError,
  UnavailableError,
  WrongExpectedVersionError,
  convertToCommandError,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type JSONType,
  type Position,
  type ReadPosition,
  type RecordedEvent,
} from '@eventstore/db-client';
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type Snapshot,
  StoreUnavailableError,
  type StoredEvent,
  type SubscribeOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from '../event-store.js';
import { newEventId } from '../event-id.js';

const SNAPSHOT_STREAM_PREFIX = 'snapshot-';
const SNAPSHOT_EVENT_TYPE = 'Snapshot';
/** Server-side subscription filter (a .NET regex on the stream name): no system and no snapshot streams. */
const VISIBLE_STREAM_REGEX = '^(?!\\$|snapshot-)';
/** readAll pages: big enough that filtered-out system events rarely cost a second round trip. */
const READ_ALL_CHUNK_MIN = 64;
const READ_ALL_CHUNK_MAX = 1_000;
/** A subscription batch never exceeds this, so one slow batch cannot hold a consumer for long. */
const MAX_BATCH = 500;
/** Buffered objects per subscription before the server is back-pressured. */
const SUBSCRIPTION_HIGH_WATER_MARK = 1_024;
const PING_TIMEOUT_MS = 2_000;
/** The commit position older servers put on events read from a stream instead of the real one. */
const NO_POSITION = 0xffff_ffff_ffff_ffffn;

/**
 * Opens the store on an `esdb://`, `esdb+discover://`, `kurrentdb://`, `kurrent://` (or `…+discover://`) URL.
 * Nothing is sent to the server yet: the client connects on first use, so a store that is down at start
 * shows up as `ping() === false` and StoreUnavailableError rather than as a crash.
 */
export async function openEventStoreDbStore(connectionString: string): Promise<EventStore> {
  const client = EventStoreDBClient.connectionString(toEsdbConnectionString(connectionString));
  return new EventStoreDbStore(client);
}

/** The v6 client only parses the `esdb` schemes; KurrentDB's schemes take the same settings. */
export function toEsdbConnectionString(connectionString: string): string {
  return connectionString.trim().replace(/^(?:esdb|kurrentdb|kurrent)(\+discover)?:\/\//i, (_, discover?: string) =>
    discover ? 'esdb+discover://' : 'esdb://',
  );
}

class EventStoreDbStore implements EventStore {
  readonly kind = 'eventstoredb' as const;
  private closed = false;
  private readonly subscriptions = new Set<EventStoreDbSubscription>();
  /** Snapshot streams whose maxCount metadata is known to be set (by this process or an earlier one). */
  private readonly snapshotStreamsReady = new Map<string, Promise<void>>();

  constructor(private readonly client: EventStoreDBClient) {}

  async append(
    streamId: string,
    events: readonly NewEvent[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new TypeError('append needs at least one event');
    const expected = options.expectedRevision ?? 'any';
    const expectedRevision = toAppendExpectedRevision(expected);
    const proposed = events.map((event) =>
      jsonEvent({
        id: event.id ?? newEventId(),
        type: event.type,
        // The port's data is any JSON value; the client's type only names the common shapes.
        data: (event.data ?? null) as JSONType,
        metadata: event.metadata,
      }),
    );
    try {
      const result = await this.client.appendToStream(streamId, proposed, { expectedRevision });
      const nextExpectedRevision = Number(result.nextExpectedRevision);
      // An idempotent re-append can come back without a position (older servers never sent one, current
      // ones omit it when the original cannot be looked up): read the event back, since read-your-writes
      // waits on this number. A fresh write always carries it.
      const position = result.position ? toPosition(result.position) : await this.positionOf(streamId, nextExpectedRevision);
      return { nextExpectedRevision, position };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion === 'no_stream' ? -1 : Number(error.actualVersion);
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      }
      throw toStoreError(error, `append to ${streamId}`);
    }
  }

  private async positionOf(streamId: string, revision: number): Promise<number> {
    const [event] = await this.read(streamId, { fromRevision: revision, maxCount: 1 });
    if (!event || event.position < 0) {
      throw new Error(`the server did not report the position of ${streamId}@${revision}; EventStoreDB ≥ 22.10 or KurrentDB is required`);
    }
    return event.position;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    return this.read(streamId, options);
  }

  private async read(streamId: string, options: ReadStreamOptions): Promise<StoredEvent[]> {
    const backwards = options.direction === 'backwards';
    const maxCount = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (maxCount <= 0) return [];
    if (options.fromRevision !== undefined && options.fromRevision < 0) return [];
    const events: StoredEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(streamId, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision !== undefined ? BigInt(options.fromRevision) : backwards ? END : START,
        maxCount,
      })) {
        if (resolved.event) events.push(toStoredEvent(resolved.event, false));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw toStoreError(error, `read ${streamId}`);
    }
    return events;
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const limit = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (limit <= 0) return [];
    // readAll from a position includes the event at that position; the port's `after` is exclusive.
    let after = options.after !== undefined && options.after >= 0 ? BigInt(options.after) : -1n;
    let from: ReadPosition = after >= 0n ? { commit: after, prepare: after } : START;
    const visible: StoredEvent[] = [];
    try {
      for (;;) {
        const chunk = Math.min(Math.max(limit - visible.length, READ_ALL_CHUNK_MIN), READ_ALL_CHUNK_MAX);
        let seen = 0;
        let last: Position | undefined;
        // The chunk is read to its end even when it holds more than needed: it is bounded, and cancelling
        // a gRPC read half-way is costlier than the few surplus events.
        for await (const resolved of this.client.readAll({ fromPosition: from, maxCount: chunk, direction: FORWARDS })) {
          seen += 1;
          const event = resolved.event;
          if (!event) continue;
          last = event.position;
          if (event.position.commit <= after) continue;
          if (visible.length < limit && isVisible(event.streamId, event.type)) visible.push(toStoredEvent(event, true));
        }
        // A short chunk is the end of $all; a chunk that did not move forward cannot be paged further.
        if (visible.length >= limit || seen < chunk || !last || last.commit <= after) return visible;
        after = last.commit;
        from = last;
      }
    } catch (error) {
      throw toStoreError(error, 'read $all');
    }
  }

  subscribe(options: SubscribeOptions = {}): Subscription {
    this.assertOpen();
    const after = options.after !== undefined && options.after >= 0 ? options.after : -1;
    const source = this.client.subscribeToAll(
      {
        // Subscribing from a position is exclusive on the server, and it switches from catch-up to live
        // without a gap or a duplicate: nothing here re-reads or merges.
        fromPosition: after >= 0 ? { commit: BigInt(after), prepare: BigInt(after) } : START,
        resolveLinkTos: false,
        filter: streamNameFilter({ regex: VISIBLE_STREAM_REGEX }),
      },
      { highWaterMark: SUBSCRIPTION_HIGH_WATER_MARK },
    );
    const subscription = new EventStoreDbSubscription(source, after, () => this.subscriptions.delete(subscription));
    this.subscriptions.add(subscription);
    return subscription;
  }

  async saveSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
    this.assertOpen();
    const stream = snapshotStreamOf(streamId);
    try {
      await this.ensureSnapshotStream(stream);
      await this.client.appendToStream(
        stream,
        jsonEvent({
          type: SNAPSHOT_EVENT_TYPE,
          data: { revision: snapshot.revision, state: (snapshot.state ?? null) as JSONType },
        }),
      );
    } catch (error) {
      throw toStoreError(error, `save snapshot of ${streamId}`);
    }
  }

  /** maxCount 1 keeps only the latest snapshot readable; scavenging then reclaims the older ones. */
  private ensureSnapshotStream(stream: string): Promise<void> {
    let ready = this.snapshotStreamsReady.get(stream);
    if (!ready) {
      ready = (async () => {
        // Read first, so a restart does not add a metadata event per stream and per start.
        const { metadata } = await this.client.getStreamMetadata(stream);
        if (metadata?.maxCount !== 1) await this.client.setStreamMetadata(stream, { ...metadata, maxCount: 1 });
      })();
      this.snapshotStreamsReady.set(stream, ready);
      ready.catch(() => this.snapshotStreamsReady.delete(stream));
    }
    return ready;
  }

  async loadSnapshot<State = unknown>(streamId: string): Promise<Snapshot<State> | null> {
    this.assertOpen();
    const [event] = await this.read(snapshotStreamOf(streamId), { direction: 'backwards', maxCount: 1 });
    if (!event) return null;
    const data = event.data as { revision?: unknown; state?: unknown } | null;
    if (!data || typeof data.revision !== 'number') return null;
    return { revision: data.revision, state: data.state as State };
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    // A one-event read of the head of $all hits the server but costs it nothing; reads ignore the
    // client's deadline option, hence the timer.
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    read.on('error', () => undefined); // reported through the iteration below; never crash on a late one
    let timer: NodeJS.Timeout | undefined;
    const answered = (async () => {
      for await (const _ of read);
      return true;
    })().catch(() => false);
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    try {
      const ok = await Promise.race([answered, timedOut]);
      if (!ok) {
        // Cancel the call and end the read, so the pending iteration settles instead of lingering.
        void read.cancel().catch(() => undefined);
        read.destroy();
      }
      return ok;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.subscriptions].map((subscription) => subscription.close()));
    await this.client.dispose();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError('event store is closed');
  }
}

/**
 * One $all subscription. The client's subscription is a Readable in paused mode: every wake-up drains
 * what is already buffered into one batch (at most MAX_BATCH) and yields it at once, so events that
 * arrive together travel together but none waits for company.
 */
class EventStoreDbSubscription implements Subscription {
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

function snapshotStreamOf(streamId: string): string {
  return `${SNAPSHOT_STREAM_PREFIX}${streamId}`;
}

function isVisible(streamId: string, type: string): boolean {
  return !streamId.startsWith('$') && !streamId.startsWith(SNAPSHOT_STREAM_PREFIX) && !type.startsWith('$');
}

function toAppendExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return 'any';
    case 'no_stream':
      return 'no_stream';
    case 'stream_exists':
      return 'stream_exists';
    default:
      // -1 is how the port reports a missing stream, so it reads as no_stream rather than as an error.
      if (expected === -1) return 'no_stream';
      if (!Number.isSafeInteger(expected) || expected < 0) throw new RangeError(`invalid expected revision ${expected}`);
      return BigInt(expected);
  }
}

/** `fromAll`: $all reads always carry the real position; stream reads on old servers may not. */
function toStoredEvent(event: RecordedEvent, fromAll: boolean): StoredEvent {
  const position = event.position && (fromAll || event.position.commit !== NO_POSITION) ? toPosition(event.position) : -1;
  return {
    id: event.id,
    streamId: event.streamId,
    revision: Number(event.revision),
    position,
    type: event.type,
    data: event.data,
    metadata: toMetadata(event.metadata),
    createdAt: event.created,
  };
}

function toPosition(position: Position): number {
  if (position.commit > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`commit position ${position.commit} is beyond 2^53 and cannot be a number without losing precision`);
  }
  return Number(position.commit);
}

function toMetadata(metadata: unknown): Record<string, unknown> {
  return metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) && !(metadata instanceof Uint8Array)
    ? (metadata as Record<string, unknown>)
    : {};
}

/** Connection-level failures become StoreUnavailableError (the HTTP layer's 503); the rest pass through. */
function toStoreError(error: unknown, what: string): unknown {
  if (error instanceof StoreUnavailableError || error instanceof WrongExpectedRevisionError) return error;
  const converted = error instanceof Error ? convertToCommandError(error) : error;
  const unavailable =
    converted instanceof UnavailableError ||
    converted instanceof DeadlineExceededError ||
    converted instanceof TimeoutError ||
    converted instanceof CancelledError ||
    converted instanceof NotLeaderError ||
    // Thrown by the client itself, before any gRPC status exists.
    (converted instanceof Error && /failed to discover|no connection established|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/i.test(converted.message));
  if (unavailable) {
    return new StoreUnavailableError(`${what}: event store unavailable (${(converted as Error).message})`, { cause: error });
  }
  return converted;
}
