/** How the store's terms map to EventStoreDB's and back: stream names, revisions, recorded events, positions, errors. */
import {
  AccessDeniedError,
  CancelledError,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  NotLeaderError,
  StreamDeletedError,
  TimeoutError,
  UnavailableError,
  convertToCommandError,
  type AppendExpectedRevision,
  type Position,
  type RecordedEvent,
} from '@eventstore/db-client';
import {
  type ExpectedRevision,
  StoreRefusedError,
  StoreUnavailableError,
  type StoredEvent,
  WrongExpectedRevisionError,
} from '../event-store.js';
import { refusedOverLimit } from './append-limits.js';

const SNAPSHOT_STREAM_PREFIX = 'snapshot-';
/** The commit position older servers put on events read from a stream instead of the real one. */
const NO_POSITION = 0xffff_ffff_ffff_ffffn;

export function snapshotStreamOf(streamId: string): string {
  return `${SNAPSHOT_STREAM_PREFIX}${streamId}`;
}

/**
 * $all holds the server's own events; readers of the port never see system streams (`$…`, which includes the
 * `$$…` stream metadata streams), events with a system type (`$…`) or the snapshot streams. Reads and
 * subscriptions of $all filter on the server by stream name, so catch-up and rebuilds never download
 * snapshots (credentials among them) or system events; the v6 client's readAll takes no filter, hence
 * readAllVisible, which sends one as the successor client (@kurrent/kurrentdb-client) does.
 */
export function isVisible(streamId: string, type: string): boolean {
  return !streamId.startsWith('$') && !streamId.startsWith(SNAPSHOT_STREAM_PREFIX) && !type.startsWith('$');
}

export function toAppendExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return 'any';
    case 'no_stream':
      return 'no_stream';
    case 'stream_exists':
      return 'stream_exists';
    default:
      return BigInt(expected);
  }
}

/** `fromAll`: $all reads always carry the real position; stream reads on old servers may not. */
export function toStoredEvent(event: RecordedEvent, fromAll: boolean): StoredEvent {
  const position =
    event.position && (fromAll || event.position.commit !== NO_POSITION) ? toPosition(event.position) : -1;
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

/**
 * The port's `position` is the event's commit position in the transaction log, as a number. Since the gRPC
 * protocol (v20) every appended event is its own self-committing prepare record, so its commit position is
 * that record's byte offset: unique per event, strictly increasing in $all order, and equal to its prepare
 * position (hence `{ commit: p, prepare: p }` as a read or subscription start). Exact below 2^53 bytes
 * (8 PiB), far beyond any single-node log; beyond, it throws rather than lose precision. Events written by the
 * legacy TCP explicit-transaction API share one commit position and are not supported.
 */
export function toPosition(position: Position): number {
  if (position.commit > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(
      `commit position ${position.commit} is beyond 2^53 and cannot be a number without losing precision`,
    );
  }
  return Number(position.commit);
}

/**
 * An event's metadata object. One written by AppendRecords (append-records.ts) is read back with the schema
 * the server adds (`$schema.name`, `$schema.format`): dropped, the writer never sets `$` keys.
 */
export function toMetadata(metadata: unknown): Record<string, unknown> {
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata) || metadata instanceof Uint8Array)
    return {};
  const object = metadata as Record<string, unknown>;
  if (!('$schema.name' in object)) return object;
  return Object.fromEntries(Object.entries(object).filter(([key]) => !key.startsWith('$schema.')));
}

/**
 * The server's `MaxAppendEventSize` (KurrentDB 25.0 and later, 16 MiB by default from 25.1: any one event over it refuses the append with
 * the `maximum-append-event-size-exceeded` trailer) as the number it names, 0 when it names none; undefined for
 * any other error. The client knows only the older whole-append limit and hands this one over as an UnknownError
 * holding the gRPC status (`_raw`).
 */
export function maxAppendEventSizeOf(error: unknown): number | undefined {
  const status = (error as { _raw?: unknown } | null)?._raw ?? error;
  // grpc-js Metadata, read by its shape: the client may load a grpc-js of its own.
  const metadata = (status as { metadata?: { get?: unknown } } | null)?.metadata;
  if (typeof metadata?.get !== 'function') return undefined;
  const value = (key: string) => {
    const first = (metadata.get as (key: string) => unknown[]).call(metadata, key)[0];
    return typeof first === 'string' ? first : Buffer.isBuffer(first) ? first.toString() : '';
  };
  if (value('exception') !== 'maximum-append-event-size-exceeded') return undefined;
  return Number(value('maximum-append-event-size')) || 0;
}

/** grpc.status.RESOURCE_EXHAUSTED (the client may load a grpc-js of its own: the number, not its enum). */
const RESOURCE_EXHAUSTED = 8;

function grpcCodeOf(error: unknown): number | undefined {
  const raw = (error as { _raw?: { code?: unknown } } | null)?._raw ?? error;
  const code = (raw as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * What the cluster refused before doing anything, so that a call, a write included, may be made again:
 * `not_leader` (a follower named the leader, Grpc/RpcExceptions.cs LeaderInfo), `not_ready` (no leader during an
 * election, or a node starting: "Server Is Not Ready" / "Server Is Too Busy"), `unreached` (no connection was
 * made, no node found). Undefined for anything else, a write that may have been done among them.
 */
export function refusedUnsent(error: unknown): 'not_leader' | 'not_ready' | 'unreached' | undefined {
  if (error instanceof NotLeaderError) return 'not_leader';
  if (!(error instanceof Error)) return undefined;
  if (error instanceof UnavailableError && /Server Is (?:Not Ready|Too Busy)/i.test(error.message)) return 'not_ready';
  if (/failed to discover|no connection established|ECONNREFUSED/i.test(error.message)) return 'unreached';
  return undefined;
}

/**
 * A failure after which the client connects again by itself (Client/index.js `shouldReconnect`: UNAVAILABLE or
 * CANCELLED, as when the leader dies under way or refuses the connection), finding the leader through gossip:
 * no reason to replace it. Replaced anyway, a client was made at every leader change (24 for two gateways in the
 * leader-kill chaos test).
 */
export function clientReconnects(error: unknown): boolean {
  return error instanceof UnavailableError || error instanceof CancelledError;
}

/**
 * Connection-level failures become StoreUnavailableError and refusals StoreRefusedError (both the HTTP
 * layer's 503); conflicts and the rest pass through.
 */
export function toStoreError(error: unknown, what: string): unknown {
  if (error instanceof StoreUnavailableError || error instanceof WrongExpectedRevisionError) return error;
  const converted = error instanceof Error ? convertToCommandError(error) : error;
  if (converted instanceof AccessDeniedError)
    return new StoreRefusedError('access_denied', `${what}: the event store denied access`, { cause: error });
  if (converted instanceof StreamDeletedError)
    return new StoreRefusedError('stream_deleted', `${what}: the stream is deleted`, { cause: error });
  if (converted instanceof MaxAppendSizeExceededError) {
    return refusedOverLimit(
      `${what}: larger than the event store's append limit (${converted.maxAppendSize} bytes)`,
      { kind: 'append', bytes: converted.maxAppendSize },
      error,
    );
  }
  // gRPC's own limit on one message the server receives (KurrentDB: 16 MiB − 10,000 bytes for the Streams
  // service): one event beyond it is refused before the server's own checks, with no exception trailer.
  if (grpcCodeOf(converted) === RESOURCE_EXHAUSTED) {
    return new StoreRefusedError(
      'append_too_large',
      `${what}: an event larger than the largest message the event store receives (${(converted as Error).message})`,
      { cause: error },
    );
  }
  const eventLimit = maxAppendEventSizeOf(converted);
  if (eventLimit !== undefined) {
    return refusedOverLimit(
      `${what}: an event larger than the event store's limit for one event (${eventLimit || 'MaxAppendEventSize'} bytes)`,
      { kind: 'event', bytes: eventLimit },
      error,
    );
  }
  const unavailable =
    converted instanceof UnavailableError ||
    converted instanceof DeadlineExceededError ||
    converted instanceof TimeoutError ||
    converted instanceof CancelledError ||
    converted instanceof NotLeaderError ||
    // Thrown by the client itself, before any gRPC status exists.
    (converted instanceof Error &&
      /failed to discover|no connection established|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/i.test(converted.message));
  if (unavailable) {
    return new StoreUnavailableError(`${what}: event store unavailable (${converted.message})`, {
      cause: error,
    });
  }
  return converted;
}
