/**
 * The EventStoreDB / KurrentDB adapter of the event store port, over the gRPC client `@eventstore/db-client@6`.
 * Requires a gRPC server (EventStoreDB ≥ 22.10 or any KurrentDB), which reports event positions on stream
 * reads and idempotent appends. Positions: toPosition; what readers never see: isVisible. How it runs and
 * what differs from SQLite: docs/operations.md, "Running on EventStoreDB / KurrentDB".
 */
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NotLeaderError,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  convertToCommandError,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type JSONType,
  type Position,
  type ReadPosition,
} from '@eventstore/db-client';
import {
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type Fence,
  FenceRejectedError,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type Snapshot,
  type SnapshotWriteOptions,
  StoreRefusedError,
  StoreUnavailableError,
  type StoredEvent,
  type SubscribeOptions,
  type Subscription,
  WrongExpectedRevisionError,
  checkExpectedRevision,
} from '../event-store.js';
import { newEventId } from '../event-id.js';
import {
  AppendRecordsUnimplementedError,
  CheckedWriteSupport,
  type CheckedWrite,
  appendRecords,
  serverChecksWrites,
} from './append-records.js';
import {
  readAllVisible,
  cancelRead,
  newClient,
  disposeClient,
  onEndpoint,
  toEsdbConnectionString,
  VISIBLE_STREAM_REGEX,
} from './eventstoredb-client.js';
import { type Clock, type ClockTimer, sleep, systemClock } from '../../time/clock.js';
import {
  SNAPSHOT_DELETED_EVENT_TYPE,
  SNAPSHOT_EVENT_TYPE,
  SnapshotStreamSetup,
  snapshotIn,
} from './snapshot-streams.js';
import { AppendLimits, type AppendLimitSettings } from './append-limits.js';
import { EventStoreDbSubscription } from './eventstoredb-subscription.js';
import {
  snapshotStreamOf,
  isVisible,
  toAppendExpectedRevision,
  toStoredEvent,
  toPosition,
  toStoreError,
  clientReconnects,
  refusedUnsent,
} from './eventstoredb-mapping.js';

/** Events per $all read call (the server filters, so each one is an event the caller wants). */
const READ_ALL_CHUNK_MAX = 1_000;
/** Buffered objects per subscription before the server is back-pressured. */
const SUBSCRIPTION_HIGH_WATER_MARK = 1_024;
const PING_TIMEOUT_MS = 2_000;
/** Hidden (snapshot-) stream the health check appends to while appends are failing. */
const HEALTH_STREAM = '$gateway-health';
/** Consecutive failures of the connection before the client is thrown away and made again. */
const FAILURES_BEFORE_NEW_CLIENT = 2;
/**
 * A client is replaced at most this often: during an election every call fails for a while, and clients made
 * one after the other would each start from the URL again (146 clients in 1.2 s once, issue 31).
 */
const MIN_CLIENT_LIFE_MS = 1_000;
/** Pauses between the tries of a call the cluster refused unanswered (no leader yet), doubled up to the last. */
const RETRY_PAUSE_MS = 25;
const RETRY_PAUSE_MAX_MS = 500;
/**
 * A retired client keeps serving what it started for this long past the operation deadline before it is
 * disposed: disposing cancels its calls, and the client ends a cancelled read as if the stream had ended (a
 * stream read as empty, a snapshot as missing, a page of $all taken for its end). Every call it started has
 * met its deadline by then.
 */
const RETIRED_CLIENT_GRACE_MS = 1_000;

export interface EventStoreDbOptions {
  /** Longest wait for one read page, append or snapshot: past it the operation is StoreUnavailableError (503). */
  operationDeadlineMs?: number;
  /** How long opening waits for the store to answer before it gives up (Infinity: until it answers). */
  startupTimeoutMs?: number;
  /** Told about each failed attempt while opening waits. */
  onWaiting?: (error: unknown, attempt: number) => void;
  /** The time of the deadlines, retries and client lifetimes (tests move it on: test/support/test-clock.ts). */
  clock?: Clock;
  limits?: AppendLimitSettings;
}

/**
 * Opens the store on an `esdb://`, `esdb+discover://`, `kurrentdb://`, `kurrent://` (or `…+discover://`) URL.
 * It waits, with backoff, until the store answers (a gateway cannot start its read models without it), and
 * fails with StoreUnavailableError after `startupTimeoutMs`.
 */
export async function openEventStoreDbStore(
  connectionString: string,
  options: EventStoreDbOptions = {},
): Promise<EventStore> {
  const store = new EventStoreDbStore(
    toEsdbConnectionString(connectionString),
    options.operationDeadlineMs ?? 10_000,
    options.clock ?? systemClock,
    new AppendLimits(options.limits),
  );
  const deadline = Date.now() + (options.startupTimeoutMs ?? 0);
  for (let attempt = 1; ; attempt++) {
    try {
      await store.readAll({ maxCount: 1 });
      store.opening = false;
      return store;
    } catch (error) {
      // Refused, not unavailable: the user lacks a right, which no wait will give it.
      if (error instanceof StoreRefusedError && error.code === 'access_denied') {
        await store.close();
        throw new StoreRefusedError(
          'access_denied',
          "the event store refused to let this user read $all (the stream of every event): the gateway follows $all for its read models and its cluster; give the user of EVENTSTORE_URL the right to read $all (a member of $admins or $ops, or named in the $r of $all's ACL, the metadata of $$$all)",
          { cause: error },
        );
      }
      if (!(error instanceof StoreUnavailableError) || Date.now() >= deadline) {
        await store.close();
        throw error;
      }
      options.onWaiting?.(error, attempt);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(250 * 2 ** (attempt - 1), 5_000, Math.max(0, deadline - Date.now()))),
      );
    }
  }
}

class EventStoreDbStore implements EventStore {
  readonly kind = 'eventstoredb' as const;
  private closed = false;
  private client: EventStoreDBClient;
  /** When the current client was made. */
  private clientSince: number;
  /** The leader a "not leader" answer named last: a replaced client starts there, not from the URL. */
  private leader: { address: string; port: number } | undefined;
  /** The current client was made for `leader` (not from the URL). */
  private clientOnLeader = false;
  /** Clients made, the first included (tests hold this bounded). */
  clientsMade = 1;
  /** Opening: only a redirect is tried again within a call; the opening loop waits for the rest, logging each try. */
  opening = true;
  /** Clients replaced after repeated failures, disposed after a grace period or at close. */
  private readonly retired = new Set<EventStoreDBClient>();
  private consecutiveFailures = 0;
  /** An append failed for want of the store and none has succeeded since: health must try the write path. */
  private writeFailing = false;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly subscriptions = new Set<EventStoreDbSubscription>();
  private readonly snapshotStreams = new SnapshotStreamSetup();
  /** Whether the server checks a fenced write's fence itself (KurrentDB 26.0.3 and later). */
  private readonly checkedWrites = new CheckedWriteSupport();

  constructor(
    private readonly connectionString: string,
    private readonly deadlineMs: number,
    private readonly clock: Clock,
    private readonly limits: AppendLimits,
  ) {
    this.client = newClient(connectionString);
    this.clientSince = clock.now();
  }

  /**
   * Runs one operation: counted for close(), bounded by the deadline, failures mapped and counted. "Not leader"
   * (with the leader's endpoint) is a redirect the client follows, not a failure. What the cluster refused before
   * doing anything (not the leader, no leader yet, no connection) is tried again within the deadline, writes
   * included; reads (`retry: 'read'`) also after any loss of the connection. A write whose outcome is unknown (a
   * timeout, a connection lost under way) is not: it answers StoreUnavailableError (503).
   */
  private run<T>(
    what: string,
    operation: (client: EventStoreDBClient) => Promise<T>,
    options: { deadlineMs?: number; cancel?: () => void; retry?: 'read' | 'write' | 'none' } = {},
  ): Promise<T> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('event store is closed'));
    const deadlineMs = options.deadlineMs ?? this.deadlineMs;
    const until = this.clock.now() + deadlineMs;
    const retry = options.retry ?? 'write';
    let expired = false;
    let timer: ClockTimer | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(() => {
        expired = true;
        options.cancel?.();
        reject(new StoreUnavailableError(`${what}: the event store did not answer within ${deadlineMs} ms`));
      }, deadlineMs);
    });
    let client = this.client;
    const attempts = async (): Promise<T> => {
      for (let tries = 0; ; tries++) {
        client = this.client;
        try {
          const result = await operation(client);
          if (client === this.client) this.consecutiveFailures = 0;
          return result;
        } catch (error) {
          const converted = error instanceof Error ? convertToCommandError(error) : error;
          const mapped = toStoreError(error, what);
          const unavailable = mapped instanceof StoreUnavailableError && !(mapped instanceof StoreRefusedError);
          const unsent = refusedUnsent(converted);
          if (converted instanceof NotLeaderError) this.followLeader(client, converted.leader);
          else if (unavailable && unsent !== 'not_ready' && !clientReconnects(converted)) this.failed(client);
          const again = this.opening
            ? unsent === 'not_leader'
            : unavailable && retry !== 'none' && (unsent !== undefined || retry === 'read');
          const pause = Math.min(RETRY_PAUSE_MS * 2 ** tries, RETRY_PAUSE_MAX_MS);
          if (!again || expired || this.closed || this.clock.now() + pause >= until) throw mapped;
          // The client switches to the leader (or reconnects) once the failed call has settled.
          await sleep(this.clock, pause);
          if (expired) throw mapped;
        }
      }
    };
    const done = (async () => {
      try {
        return await Promise.race([attempts(), timedOut]);
      } catch (error) {
        // Nothing answered within the deadline: a failure of the client too.
        if (expired) this.failed(client);
        throw this.limits.learned(toStoreError(error, what));
      } finally {
        this.clock.clear(timer);
      }
    })();
    this.inflight.add(done);
    void done.catch(() => undefined).finally(() => this.inflight.delete(done));
    return done;
  }

  /** A "not leader" answer named the leader: the client goes there by itself; a client made later starts there. */
  private followLeader(client: EventStoreDBClient, leader: { address: string; port: number }): void {
    if (client !== this.client) return;
    this.leader = leader;
  }

  /**
   * The client caches some failures for good (it reconnects only on UNAVAILABLE and CANCELLED, which are not
   * counted here, and a timed-out GetSupportedMethods probe is kept for every call that asks it): after repeated
   * failures of the other kinds, start over with a new client, at most once per MIN_CLIENT_LIFE_MS. It starts at
   * the leader last named, unless the client that failed was already made for it (that leader is gone: the URL).
   */
  private failed(client: EventStoreDBClient): void {
    if (client !== this.client || ++this.consecutiveFailures < FAILURES_BEFORE_NEW_CLIENT || this.closed) return;
    if (this.clock.now() - this.clientSince < MIN_CLIENT_LIFE_MS) return;
    this.consecutiveFailures = 0;
    if (this.clientOnLeader) this.leader = undefined;
    this.clientOnLeader = this.leader !== undefined;
    this.client = newClient(this.leader ? onEndpoint(this.connectionString, this.leader) : this.connectionString);
    this.clientSince = this.clock.now();
    this.clientsMade += 1;
    this.retired.add(client);
    this.clock
      .setTimeout(() => {
        if (this.retired.delete(client)) void disposeClient(client);
      }, this.deadlineMs + RETIRED_CLIENT_GRACE_MS)
      .unref();
  }

  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    if (events.length === 0) throw new TypeError('append needs at least one event');
    const expected = checkExpectedRevision(options.expectedRevision ?? 'any');
    const expectedRevision = toAppendExpectedRevision(expected);
    // The client serialises inside a promise executor, where a value JSON refuses would never settle the append.
    for (const event of events) JSON.stringify([event.data, event.metadata]);
    this.limits.check(streamId, events);
    const identified = events.map((event) => ({ ...event, id: event.id ?? newEventId() }));
    if (options.fence) {
      const checked = await this.appendChecked({ streamId, events: identified, expected, fence: options.fence });
      if (checked) return checked;
      await this.checkFence(options.fence);
    }
    const proposed = identified.map((event) =>
      jsonEvent({
        id: event.id,
        type: event.type,
        // The port's data is any JSON value; the client's type only names the common shapes.
        data: (event.data ?? null) as JSONType,
        metadata: event.metadata,
      }),
    );
    try {
      const result = await this.run(`append to ${streamId}`, (client) =>
        client.appendToStream(streamId, proposed, { expectedRevision }),
      );
      // throwOnAppendFailure is stripped from the URL; a client that still reports a failure is a conflict.
      if (!result.success)
        throw new WrongExpectedRevisionError(streamId, expected, Number(result.nextExpectedRevision));
      this.writeFailing = false;
      const nextExpectedRevision = Number(result.nextExpectedRevision);
      // An idempotent re-append can come back without a position (older servers never sent one, current
      // ones omit it when the original cannot be looked up): read the event back, since read-your-writes
      // waits on this number. A fresh write always carries it.
      const position = result.position
        ? toPosition(result.position)
        : await this.positionOf(streamId, nextExpectedRevision);
      return { nextExpectedRevision, position };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion === 'no_stream' ? -1 : Number(error.actualVersion);
        throw new WrongExpectedRevisionError(streamId, expected, actual);
      }
      if (error instanceof StoreUnavailableError && !(error instanceof StoreRefusedError)) this.writeFailing = true;
      throw error;
    }
  }

  private async positionOf(streamId: string, revision: number): Promise<number> {
    const [event] = await this.read(streamId, { fromRevision: revision, maxCount: 1 });
    if (!event || event.position < 0) {
      throw new Error(
        `the server did not report the position of ${streamId}@${revision}; EventStoreDB ≥ 22.10 or KurrentDB is required`,
      );
    }
    return event.position;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    return this.read(streamId, options);
  }

  private async read(streamId: string, options: ReadStreamOptions): Promise<StoredEvent[]> {
    const backwards = options.direction === 'backwards';
    const maxCount = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (maxCount <= 0) return [];
    if (options.fromRevision !== undefined && options.fromRevision < 0) return [];
    const events: StoredEvent[] = [];
    let cancel: (() => void) | undefined;
    try {
      await this.run(
        `read ${streamId}`,
        async (client) => {
          events.length = 0;
          const read = client.readStream(streamId, {
            direction: backwards ? BACKWARDS : FORWARDS,
            fromRevision: options.fromRevision !== undefined ? BigInt(options.fromRevision) : backwards ? END : START,
            maxCount,
          });
          cancel = () => cancelRead(read);
          for await (const resolved of read as AsyncIterable<AllStreamResolvedEvent>) {
            if (resolved.event) events.push(toStoredEvent(resolved.event, false));
          }
        },
        { cancel: () => cancel?.(), retry: 'read' },
      );
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    const limit = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (limit <= 0) return [];
    // readAll from a position includes the event at that position; the port's `after` is exclusive, its `from` not.
    const first = options.from !== undefined && options.from > 0 ? BigInt(options.from) : undefined;
    let after =
      first !== undefined
        ? first - 1n
        : options.after !== undefined && options.after >= 0
          ? BigInt(options.after)
          : -1n;
    let from: ReadPosition =
      first !== undefined ? { commit: first, prepare: first } : after >= 0n ? { commit: after, prepare: after } : START;
    const visible: StoredEvent[] = [];
    for (;;) {
      // One more than wanted when reading from a position: the server's read includes the event there.
      const chunk = Math.min(limit - visible.length + (after >= 0n ? 1 : 0), READ_ALL_CHUNK_MAX);
      let seen = 0;
      let last: Position | undefined;
      let cancel: (() => void) | undefined;
      const before = visible.length;
      // The chunk is read to its end even when it holds more than needed: it is bounded, and cancelling
      // a gRPC read half-way is costlier than the few surplus events. Each chunk has its own deadline.
      await this.run(
        'read $all',
        async (client) => {
          // A try again starts the chunk over.
          seen = 0;
          last = undefined;
          visible.length = before;
          const read = readAllVisible(client, from, chunk);
          cancel = () => cancelRead(read);
          for await (const resolved of read as AsyncIterable<AllStreamResolvedEvent>) {
            seen += 1;
            const event = resolved.event;
            if (!event) continue;
            last = event.position;
            if (event.position.commit <= after) continue;
            if (visible.length < limit && isVisible(event.streamId, event.type))
              visible.push(toStoredEvent(event, true));
          }
        },
        { cancel: () => cancel?.(), retry: 'read' },
      );
      const reached = last;
      // A short chunk is the end of $all (the server counts only the events that pass its filter); a chunk that
      // did not move forward cannot be paged further.
      if (visible.length >= limit || seen < chunk || !reached || reached.commit <= after) return visible;
      after = reached.commit;
      from = reached;
    }
  }

  subscribe(options: SubscribeOptions = {}): Subscription {
    if (this.closed) throw new StoreUnavailableError('event store is closed');
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

  /** A fenced write checked inside the write (KurrentDB 26.0.3+); undefined where not (the fence is read first). */
  private async appendChecked(write: CheckedWrite): Promise<AppendResult | undefined> {
    const ask = () => this.run('ask the event store its features', serverChecksWrites, { retry: 'read' });
    if (!(await this.checkedWrites.available(ask))) return undefined;
    try {
      const result = await this.run(`append to ${write.streamId}`, (client) => appendRecords(client, write));
      this.writeFailing = false;
      return result;
    } catch (error) {
      if (error instanceof AppendRecordsUnimplementedError) {
        this.checkedWrites.turnOff();
        return undefined;
      }
      if (error instanceof StoreUnavailableError && !(error instanceof StoreRefusedError)) this.writeFailing = true;
      throw error;
    }
  }

  /**
   * Servers before KurrentDB 26.0.3 cannot make one write conditional on another stream, so the fence is read
   * just before the write: a lease taken over earlier is refused here, and the owner stops acting well before
   * its lease can be taken (it drops its devices once it could not renew for LEASE_TIMEOUT minus a margin),
   * which leaves that margin for the read and the write together (docs/architecture.md, "Several processes").
   */
  private async checkFence(fence: Fence): Promise<void> {
    const [last] = await this.readStream(fence.streamId, { direction: 'backwards', maxCount: 1 });
    const actual = last?.revision ?? -1;
    if (actual !== fence.revision) throw new FenceRejectedError(fence, actual);
  }

  async saveSnapshot(streamId: string, snapshot: Snapshot, options: SnapshotWriteOptions = {}): Promise<void> {
    const stream = snapshotStreamOf(streamId);
    try {
      await this.appendToSnapshotStream(
        `save snapshot of ${streamId}`,
        stream,
        SNAPSHOT_EVENT_TYPE,
        { revision: snapshot.revision, state: (snapshot.state ?? null) as JSONType },
        options.fence,
      );
    } catch (error) {
      // A snapshot is a shortcut, not a record: one over the server's append limit is simply not kept, and
      // loading falls back to the previous snapshot plus the events after it.
      if (error instanceof StoreRefusedError && error.code === 'append_too_large') return;
      throw error;
    }
  }

  /**
   * Appends an empty marker to the snapshot stream rather than deleting it: with `$maxCount` 1 the snapshot
   * before it reads as gone at once and leaves the disk at the next scavenge, while the marker, which holds
   * nothing, is the event a scavenge keeps (it never removes a stream's last event unless the stream is
   * hard-deleted; a soft delete would also drop the stream's `$maxCount`).
   */
  async deleteSnapshot(streamId: string, options: SnapshotWriteOptions = {}): Promise<void> {
    const stream = snapshotStreamOf(streamId);
    const [last] = await this.read(stream, { direction: 'backwards', maxCount: 1 });
    // Nothing to delete: never saved, or deleted already.
    if (!last || last.type === SNAPSHOT_DELETED_EVENT_TYPE) return;
    await this.appendToSnapshotStream(
      `delete snapshot of ${streamId}`,
      stream,
      SNAPSHOT_DELETED_EVENT_TYPE,
      {},
      options.fence,
    );
  }

  /** One event at any revision (its stream set up first), fenced: checked by the server, or the fence read first. */
  private async appendToSnapshotStream(
    what: string,
    stream: string,
    type: string,
    data: JSONType,
    fence: Fence | undefined,
  ): Promise<void> {
    const events = [{ id: newEventId(), type, data }];
    this.limits.check(stream, events);
    await this.snapshotStreams.ensure(stream, (what, operation) => this.run(what, operation));
    if (fence && (await this.appendChecked({ streamId: stream, events, expected: 'any', fence }))) return;
    if (fence) await this.checkFence(fence);
    await this.run(what, (client) => client.appendToStream(stream, jsonEvent({ type, data })));
  }

  async loadSnapshot<State = unknown>(streamId: string): Promise<Snapshot<State> | null> {
    const [event] = await this.read(snapshotStreamOf(streamId), { direction: 'backwards', maxCount: 1 });
    return snapshotIn<State>(event);
  }

  /**
   * Reads the newest event of a hidden stream of empty events (never the head of $all: whatever was written last);
   * while appends fail, also appends to it, so health reports a store that reads but cannot write.
   */
  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      let cancel: (() => void) | undefined;
      await this.run(
        'ping',
        async (client) => {
          const read = client.readStream(snapshotStreamOf(HEALTH_STREAM), {
            direction: BACKWARDS,
            fromRevision: END,
            maxCount: 1,
          });
          cancel = () => cancelRead(read);
          try {
            for await (const _ of read);
          } catch (error) {
            // Not written yet: the server answered, which is all a ping asks.
            if (!(convertToCommandError(error as Error) instanceof StreamNotFoundError)) throw error;
          }
        },
        // Health tells what the store answers now: never tried again.
        { deadlineMs: PING_TIMEOUT_MS, cancel: () => cancel?.(), retry: 'none' },
      );
      if (this.writeFailing) {
        await this.run(
          'ping (write)',
          (client) =>
            client.appendToStream(snapshotStreamOf(HEALTH_STREAM), jsonEvent({ type: 'HealthChecked', data: {} })),
          { deadlineMs: PING_TIMEOUT_MS, retry: 'none' },
        );
        this.writeFailing = false;
      }
      return true;
    } catch {
      return false;
    }
  }

  /** Lets what was started finish (within the deadline), ends the subscriptions, then closes the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.race([
      Promise.allSettled([...this.inflight]),
      new Promise((resolve) => setTimeout(resolve, this.deadlineMs).unref()),
    ]);
    await Promise.allSettled([...this.subscriptions].map((subscription) => subscription.close()));
    const clients = [this.client, ...this.retired];
    this.retired.clear();
    await Promise.allSettled(clients.map(disposeClient));
  }
}
