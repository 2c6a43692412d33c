/**
 * A fenced write in one call: KurrentDB's v2 `AppendRecords` (26.0.3 and later) with two consistency checks, the
 * written stream's expected revision and the fence stream's revision, evaluated by the leader inside the
 * write's transaction. Made directly over the v6 client's own channel (its connection, credentials, leader
 * and reconnection), since that client has no v2 call; the protocol's text is kurrentdb-v2-protocol.ts.
 * Servers before 26.0.3 keep the read-then-write fence (eventstoredb-event-store.ts).
 */
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { EventStoreDBClient } from '@eventstore/db-client';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import { type ExpectedRevision, type Fence, FenceRejectedError, WrongExpectedRevisionError } from '../event-store.js';
import { refusedOverLimit } from './append-limits.js';
import type { ClientCalls } from './eventstoredb-client.js';
import {
  APPEND_RECORDS_SERVICE,
  GOOGLE_RPC_PROTO,
  KURRENTDB_V2_STREAMS_ERRORS_PROTO,
  KURRENTDB_V2_STREAMS_PROTO,
  KURRENT_RPC_ERRORS_PROTO,
} from './kurrentdb-v2-protocol.js';

/** The first release whose AppendRecords evaluates consistency checks (an earlier one would ignore them). */
const FIRST_RELEASE_WITH_CHECKS = [26, 0, 3] as const;
export const APPEND_RECORDS_PATH = `/${APPEND_RECORDS_SERVICE}/AppendRecords`;
/** ExpectedRevisionConstants and the actual states a violation reports. */
const NO_STREAM = -1;
const ANY = -2;
const EXISTS = -4;
/** The check's place in the request: the fence is always the second. */
const FENCE_CHECK_INDEX = 1;

const root = protobuf.Root.fromJSON(protobuf.common.get('google/protobuf/struct.proto')!);
root.addJSON(protobuf.common.get('google/protobuf/any.proto')!.nested!);
for (const text of [
  KURRENTDB_V2_STREAMS_PROTO,
  KURRENTDB_V2_STREAMS_ERRORS_PROTO,
  KURRENT_RPC_ERRORS_PROTO,
  GOOGLE_RPC_PROTO,
])
  protobuf.parse(text, root);
root.resolveAll();
const type = (name: string) => root.lookupType(name);
const Request = type('kurrentdb.protocol.v2.streams.AppendRecordsRequest');
const Response = type('kurrentdb.protocol.v2.streams.AppendRecordsResponse');
const RpcStatus = type('google.rpc.Status');
const TO_OBJECT = { longs: String, defaults: true, oneofs: true } as const;

interface AppendRecordsReply {
  revisions: Array<{ stream: string; revision: string }>;
  position: string;
}

/** A grpc-js client class for the one method, made on the v6 client's channel by its own call machinery. */
const AppendRecordsClient = grpc.makeGenericClientConstructor(
  {
    appendRecords: {
      path: APPEND_RECORDS_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: object) => Buffer.from(Request.encode(Request.fromObject(value)).finish()),
      requestDeserialize: (bytes: Buffer) => Request.toObject(Request.decode(bytes), TO_OBJECT),
      responseSerialize: (value: object) => Buffer.from(Response.encode(Response.fromObject(value)).finish()),
      responseDeserialize: (bytes: Buffer) => Response.toObject(Response.decode(bytes), TO_OBJECT),
    },
  },
  'StreamsService',
);
type AppendRecordsGrpcClient = grpc.Client & {
  appendRecords(
    request: object,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, reply?: AppendRecordsReply) => void,
  ): grpc.ClientUnaryCall;
};

/** The client's protected call runner: its channel, and a reconnection (to the leader named) on failure. */
interface ExecutingClient {
  execute<C, T>(Client: new (...args: never[]) => C, debugName: string, action: (client: C) => Promise<T>): Promise<T>;
}

/**
 * Asks the server (GetSupportedMethods, within the caller's deadline, not the client's cached answer, which a
 * failed probe would spoil for good) whether it lists AppendRecords and its release evaluates the checks.
 */
export function serverChecksWrites(client: EventStoreDBClient): Promise<boolean> {
  const calls = client as unknown as ExecutingClient & ClientCalls;
  return calls.execute(
    serverFeaturesGrpc.ServerFeaturesClient,
    'getSupportedMethods',
    (features) =>
      new Promise<boolean>((resolve, reject) => {
        const [metadata, options] = calls.callArguments({}) as [grpc.Metadata, grpc.CallOptions];
        features.getSupportedMethods(new sharedPb.Empty(), metadata, options, (error, supported) => {
          // A server before 21.10 has no features to list: it has no AppendRecords either.
          if (error?.code === grpc.status.UNIMPLEMENTED) return resolve(false);
          if (error) return reject(error);
          const listed = supported
            .getMethodsList()
            .some(
              (method) =>
                `/${method.getServiceName()}/${method.getMethodName()}`.toLowerCase() ===
                APPEND_RECORDS_PATH.toLowerCase(),
            );
          resolve(listed && releaseChecksWrites(supported.getEventStoreServerVersion()));
        });
      }),
  );
}

export function releaseChecksWrites(version: string): boolean {
  const parts = version.split('.').map((part) => Number.parseInt(part, 10));
  for (let i = 0; i < FIRST_RELEASE_WITH_CHECKS.length; i++) {
    const part = parts[i] ?? 0;
    if (!Number.isFinite(part)) return false;
    if (part !== FIRST_RELEASE_WITH_CHECKS[i]) return part > FIRST_RELEASE_WITH_CHECKS[i];
  }
  return true;
}

/** The server has no AppendRecords (UNIMPLEMENTED): the caller falls back to the read-then-write fence. */
export class AppendRecordsUnimplementedError extends Error {
  override readonly name = 'AppendRecordsUnimplementedError';
}

export interface CheckedWrite {
  streamId: string;
  expected: ExpectedRevision;
  events: ReadonlyArray<{ id: string; type: string; data: unknown; metadata?: Record<string, unknown> }>;
  fence: Fence;
}

/**
 * Appends `events` to `streamId` if it is at `expected` and the fence stream is at the fence's revision, both
 * checked by the leader in the write's transaction: a moved fence is FenceRejectedError, a moved stream
 * WrongExpectedRevisionError (the fence first, as the read-then-write fence does). Refusals the server made
 * before doing anything (not the leader, not ready) come out as the v1 errors the store already retries.
 */
export function appendRecords(
  client: EventStoreDBClient,
  write: CheckedWrite,
): Promise<{ nextExpectedRevision: number; position: number }> {
  const request = {
    records: write.events.map((event) => ({
      recordId: event.id,
      properties: toFields(event.metadata ?? {}),
      schema: { format: 1, name: event.type },
      data: Buffer.from(JSON.stringify(event.data ?? null)),
      stream: write.streamId,
    })),
    checks: [
      { streamState: { stream: write.streamId, expectedState: toExpectedState(write.expected) } },
      { streamState: { stream: write.fence.streamId, expectedState: write.fence.revision } },
    ],
  };
  const calls = client as unknown as ExecutingClient & ClientCalls;
  return calls.execute(
    AppendRecordsClient as unknown as new () => AppendRecordsGrpcClient,
    'appendRecords',
    (grpcClient) =>
      new Promise((resolve, reject) => {
        const [metadata, options] = calls.callArguments({}) as [grpc.Metadata, grpc.CallOptions];
        grpcClient.appendRecords(request, metadata, options, (error, reply) => {
          if (error || !reply) {
            reject(toV1Error(error ?? new Error('AppendRecords answered nothing'), write));
            return;
          }
          const revision = reply.revisions.find((entry) => entry.stream === write.streamId)?.revision;
          resolve({ nextExpectedRevision: Number(revision ?? -1), position: Number(reply.position) });
        });
      }),
  );
}

function toExpectedState(expected: ExpectedRevision): number {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return EXISTS;
  return expected;
}

/** A JSON object as a google.protobuf.Struct's fields (record properties, which the server keeps as metadata). */
function toFields(object: Record<string, unknown>): Record<string, object> {
  const fields: Record<string, object> = {};
  for (const [key, value] of Object.entries(object)) if (value !== undefined) fields[key] = toValue(value);
  return fields;
}

function toValue(value: unknown): object {
  if (value === null || value === undefined) return { nullValue: 0 };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(toValue) } };
  return { structValue: { fields: toFields(value as Record<string, unknown>) } };
}

interface AnyDetail {
  type_url: string;
  value: Uint8Array;
}

/** The details of a v2 error (google.rpc.Status in the `grpc-status-details-bin` trailer), by type name. */
function detailsOf(error: grpc.ServiceError): Map<string, Record<string, unknown>> {
  const details = new Map<string, Record<string, unknown>>();
  const [bytes] = error.metadata?.get('grpc-status-details-bin') ?? [];
  if (!Buffer.isBuffer(bytes)) return details;
  try {
    const status = RpcStatus.toObject(RpcStatus.decode(bytes), TO_OBJECT) as { details: AnyDetail[] };
    for (const detail of status.details) {
      const name = detail.type_url.slice(detail.type_url.lastIndexOf('/') + 1);
      const known = root.lookup(name);
      if (known instanceof protobuf.Type) details.set(name, known.toObject(known.decode(detail.value), TO_OBJECT));
    }
  } catch {
    // Details that do not parse leave the status code to speak.
  }
  return details;
}

/** The v1 protocol's trailers, which the v6 client turns into its errors (NotLeaderError and the rest). */
function v1Status(code: grpc.status, details: string, trailers: Record<string, string> = {}): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(trailers)) metadata.set(key, value);
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

function toV1Error(error: Error, write: CheckedWrite): Error {
  const status = error as grpc.ServiceError;
  if (typeof status.code !== 'number') return error;
  if (status.code === grpc.status.UNIMPLEMENTED)
    return new AppendRecordsUnimplementedError('the event store has no AppendRecords', { cause: error });
  const details = detailsOf(status);
  const violations = details.get('kurrentdb.protocol.v2.streams.errors.AppendConsistencyViolationErrorDetails') as
    { violations: Array<{ checkIndex: number; streamState?: { actualState: string } }> } | undefined;
  if (violations) {
    const fence = violations.violations.find((violation) => violation.checkIndex === FENCE_CHECK_INDEX);
    if (fence) return new FenceRejectedError(write.fence, Math.max(NO_STREAM, Number(fence.streamState?.actualState)));
    const actual = Number(violations.violations[0]?.streamState?.actualState ?? NO_STREAM);
    return new WrongExpectedRevisionError(write.streamId, write.expected, Math.max(NO_STREAM, actual));
  }
  const recordSize = details.get('kurrentdb.protocol.v2.streams.errors.AppendRecordSizeExceededErrorDetails');
  const transactionSize = details.get('kurrentdb.protocol.v2.streams.errors.AppendTransactionSizeExceededErrorDetails');
  if (recordSize || transactionSize) {
    const bytes = (recordSize ?? transactionSize)!.maxSize as number;
    return refusedOverLimit(
      `append to ${write.streamId}: larger than the event store's limit for ${recordSize ? 'one event' : 'one append'} (${bytes} bytes)`,
      { kind: recordSize ? 'event' : 'append', bytes },
      error,
    );
  }
  const leader = details.get('kurrent.rpc.NotLeaderNodeErrorDetails') as
    { currentLeader?: { host: string; port: number } } | undefined;
  if (leader?.currentLeader) {
    return v1Status(grpc.status.NOT_FOUND, 'Leader info available', {
      exception: 'not-leader',
      'leader-endpoint-host': leader.currentLeader.host,
      'leader-endpoint-port': String(leader.currentLeader.port),
    });
  }
  const reason = (details.get('google.rpc.ErrorInfo') as { reason?: string } | undefined)?.reason;
  if (reason === 'SERVER_NOT_READY') return v1Status(grpc.status.UNAVAILABLE, 'Server Is Not Ready');
  if (reason === 'SERVER_OVERLOADED') return v1Status(grpc.status.UNAVAILABLE, 'Server Is Too Busy');
  if (status.code === grpc.status.PERMISSION_DENIED)
    return v1Status(grpc.status.PERMISSION_DENIED, status.details, { exception: 'access-denied' });
  return error;
}

/**
 * Whether a store's fenced writes go through AppendRecords: asked once from the server's features (its methods
 * and its release); a server that answers UNIMPLEMENTED all the same (its v2 API turned off) turns it off for
 * good. A server that cannot be asked (down) is asked again at the next write, which meanwhile reads its fence.
 */
export class CheckedWriteSupport {
  private answer: Promise<boolean> | undefined;

  available(ask: () => Promise<boolean>): Promise<boolean> {
    this.answer ??= ask().catch(() => {
      this.answer = undefined;
      return false;
    });
    return this.answer;
  }

  turnOff(): void {
    this.answer = Promise.resolve(false);
  }
}
