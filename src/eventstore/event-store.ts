/**
 * The event store port. Every adapter (embedded SQLite, EventStoreDB) implements exactly this,
 * and the rest of the gateway never knows which one it talks to (docs/architecture.md, invariant 7).
 *
 * Revisions are 0-based per stream (the first event of a stream has revision 0), as in EventStoreDB.
 * Positions are global, strictly increasing across all streams, and only comparable within one store.
 */

/** What the caller believes the stream's last revision is when appending. */
export type ExpectedRevision =
  | 'any' // no check
  | 'no_stream' // the stream must not exist yet
  | 'stream_exists' // the stream must have at least one event
  | number; // the stream's last event must have exactly this revision

export interface NewEvent<Type extends string = string, Data = unknown> {
  /**
   * A UUID. Re-appending events with the same ids to the same stream is idempotent; give deterministic ids
   * where a retry could append twice. Ids are keys within a stream: the same id in another stream is
   * another event (as on EventStoreDB). They are not a uniqueness constraint: EventStoreDB writes an append
   * made exactly at the stream's head whatever its ids (SQLite refuses an id the stream has), so a retry is
   * recognised by the expected revision it carries, and deciders recognise repeats by their state.
   */
  id?: string;
  type: Type;
  data: Data;
  metadata?: Record<string, unknown>;
}

export interface StoredEvent<Type extends string = string, Data = unknown> {
  id: string;
  streamId: string;
  revision: number;
  position: number;
  type: Type;
  data: Data;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export interface AppendResult {
  /** Revision of the last event now in the stream. */
  nextExpectedRevision: number;
  /** Global position of the last appended event: wait for projections to reach it to read your writes. */
  position: number;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive. Forwards defaults to 0, backwards to the end of the stream. */
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Omitted: from the very first event. */
  after?: number;
  /**
   * Inclusive, instead of `after`: the event at this position first. Only a position an event was read at: on
   * EventStoreDB any other may fall inside a record, which the server refuses.
   */
  from?: number;
  maxCount?: number;
}

export interface SubscribeOptions {
  /** Exclusive, as in ReadAllOptions: resume right after a checkpoint. */
  after?: number;
}

/**
 * Catches up from `after`, then goes live, with no gap and no duplicate at the switch.
 * Iterating yields non-empty batches in position order.
 */
export interface Subscription extends AsyncIterable<readonly StoredEvent[]> {
  close(): Promise<void>;
}

export interface Snapshot<State = unknown> {
  /** Revision of the last event the state includes. */
  revision: number;
  state: State;
}

/**
 * A fencing token: the write is made only while `streamId`'s last revision is still `revision` (a device's
 * lease stream, whose revision changes whenever the device changes hands). A former owner that was paused
 * or cut off past its lease gets FenceRejectedError instead of a write (docs/architecture.md, "Several processes").
 */
export interface Fence {
  streamId: string;
  revision: number;
}

export interface AppendOptions {
  expectedRevision?: ExpectedRevision;
  fence?: Fence;
  /**
   * Decides again when the stream moved past `expectedRevision` (a revision or no_stream): called with the
   * stream's events after it, it answers the events to append after them instead (`[]`: append nothing,
   * and the append answers the stream's last event), or undefined to fail with WrongExpectedRevisionError.
   * A writer that lost to another one then decides again without a round trip. Called synchronously: it
   * must not wait for anything. SQLite calls it inside the append's write transaction (nothing can move the
   * stream meanwhile); EventStoreDB does not support it and reports the conflict. A throw fails the append.
   */
  onConflict?: ConflictResolver;
  /**
   * Called once the append is committed, before it is durable (SQLite: right after its write transaction, while
   * the flush to disk is still to come): a writer may decide its next append on it and have it committed meanwhile,
   * never answering anyone before the append itself answers. EventStoreDB does not call it.
   */
  onCommitted?: (result: AppendResult) => void;
}

/** See AppendOptions.onConflict. */
export type ConflictResolver = (newer: readonly StoredEvent[]) => readonly NewEvent[] | undefined;

export interface SnapshotWriteOptions {
  fence?: Fence;
}

export interface EventStore {
  readonly kind: 'sqlite' | 'eventstoredb';
  append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /** A stream that does not exist reads as empty. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  readAll(options?: ReadAllOptions): Promise<StoredEvent[]>;
  subscribe(options?: SubscribeOptions): Subscription;
  saveSnapshot(streamId: string, snapshot: Snapshot, options?: SnapshotWriteOptions): Promise<void>;
  loadSnapshot<State = unknown>(streamId: string): Promise<Snapshot<State> | null>;
  /**
   * Removes the stream's snapshot (credentials being wiped): loadSnapshot answers null until the next save.
   * SQLite deletes the row; EventStoreDB deletes the snapshot stream, whose events stay on disk until the
   * database is scavenged (docs/operations.md, "Running on EventStoreDB / KurrentDB").
   */
  deleteSnapshot(streamId: string, options?: SnapshotWriteOptions): Promise<void>;
  /** True when the store answers; never throws. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  override readonly name = 'WrongExpectedRevisionError';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** -1 when the stream does not exist. */
    readonly actual: number,
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${actual === -1 ? 'no stream' : actual}`);
  }
}

/**
 * The fence moved: the writer no longer holds the lease it wrote under (another process owns the device).
 * Not a conflict to decide again: the writer must stop acting for the device.
 */
export class FenceRejectedError extends Error {
  override readonly name = 'FenceRejectedError';
  constructor(
    readonly fence: Fence,
    /** -1 when the fence stream does not exist. */
    readonly actual: number,
  ) {
    super(`fence ${fence.streamId}: held at revision ${fence.revision}, now ${actual === -1 ? 'no stream' : actual}`);
  }
}

/** The store cannot be reached or cannot write; the HTTP layer answers 503 store_unavailable. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The store answered but refuses the operation for good (credentials without the right, a deleted stream,
 * a write over the server's size limit). Still a 503 for the HTTP layer: the request itself was fine.
 */
export class StoreRefusedError extends StoreUnavailableError {
  constructor(
    readonly code: 'access_denied' | 'stream_deleted' | 'append_too_large',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Re-appending the same ids with other content, or only some of them, is a caller bug, not a retry. */
export class IdempotencyViolationError extends Error {
  override readonly name = 'IdempotencyViolationError';
}

/** -1 is how the port reports a missing stream, so it means no_stream; any other negative is a caller bug. */
export function checkExpectedRevision(expected: ExpectedRevision): ExpectedRevision {
  if (typeof expected !== 'number') return expected;
  if (expected === -1) return 'no_stream';
  if (!Number.isSafeInteger(expected) || expected < 0) throw new RangeError(`invalid expected revision ${expected}`);
  return expected;
}

export function revisionMatches(expected: ExpectedRevision, actual: number): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return actual === -1;
  if (expected === 'stream_exists') return actual >= 0;
  return expected === actual;
}
