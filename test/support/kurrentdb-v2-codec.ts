/**
 * The test server's side of KurrentDB's v2 `AppendRecords`: the service loaded by @grpc/proto-loader from the
 * server's own `.proto` files, kept verbatim in `kurrentdb-proto/` (so the adapter's copy of the protocol,
 * src/eventstore/eventstoredb/kurrentdb-v2-protocol.ts, is checked against them on every call), and its errors
 * as the server sends them (KurrentDB.Api.V2 RpcExceptions.FromError: a google.rpc.Status in the
 * `grpc-status-details-bin` trailer whose details are an ErrorInfo, then the error's own details).
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import {
  GOOGLE_RPC_PROTO,
  KURRENTDB_V2_STREAMS_ERRORS_PROTO,
  KURRENT_RPC_ERRORS_PROTO,
} from '../../src/eventstore/eventstoredb/kurrentdb-v2-protocol.js';

const protoDir = fileURLToPath(new URL('./kurrentdb-proto/', import.meta.url));
const definition = protoLoader.loadSync('kurrentdb/protocol/v2/streams/streams.proto', {
  includeDirs: [protoDir],
  longs: String,
  enums: Number,
  defaults: true,
  oneofs: true,
});
const loaded = grpc.loadPackageDefinition(definition) as unknown as {
  kurrentdb: { protocol: { v2: { streams: { StreamsService: { service: grpc.ServiceDefinition } } } } };
};
export const appendRecordsService = loaded.kurrentdb.protocol.v2.streams.StreamsService.service;

/** AppendRecordsRequest as proto-loader decodes it (camelCase, longs as strings, oneofs named). */
export interface AppendRecordsRequestMessage {
  records: Array<{
    recordId: string;
    properties: Record<string, ProtoValue>;
    schema: { format: number; name: string; id: string } | null;
    data: Buffer;
    stream: string;
  }>;
  checks: Array<{ streamState: { stream: string; expectedState: string } | null }>;
}
interface ProtoValue {
  kind?: string;
  nullValue?: number;
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  structValue?: { fields: Record<string, ProtoValue> };
  listValue?: { values: ProtoValue[] };
}

export function valueToJson(value: ProtoValue): unknown {
  switch (value.kind) {
    case 'numberValue':
      return value.numberValue;
    case 'stringValue':
      return value.stringValue;
    case 'boolValue':
      return value.boolValue;
    case 'structValue':
      return fieldsToJson(value.structValue?.fields ?? {});
    case 'listValue':
      return (value.listValue?.values ?? []).map(valueToJson);
    default:
      return null;
  }
}

export function fieldsToJson(fields: Record<string, ProtoValue>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, valueToJson(value)]));
}

const errorsRoot = protobuf.Root.fromJSON(protobuf.common.get('google/protobuf/any.proto')!);
for (const text of [KURRENTDB_V2_STREAMS_ERRORS_PROTO, KURRENT_RPC_ERRORS_PROTO, GOOGLE_RPC_PROTO])
  protobuf.parse(text, errorsRoot);
errorsRoot.resolveAll();

function packed(typeName: string, value: object): { type_url: string; value: Uint8Array } {
  const type = errorsRoot.lookupType(typeName);
  return { type_url: `type.googleapis.com/${typeName}`, value: type.encode(type.fromObject(value)).finish() };
}

/** A v2 error: the status code, and the ErrorInfo (reason, domain) followed by the error's details. */
export function v2Error(
  code: grpc.status,
  message: string,
  reason: string,
  domain: string,
  detail?: { type: string; value: object },
): Partial<grpc.StatusObject> {
  const Status = errorsRoot.lookupType('google.rpc.Status');
  const details = [packed('google.rpc.ErrorInfo', { reason, domain })];
  if (detail) details.push(packed(detail.type, detail.value));
  const metadata = new grpc.Metadata();
  metadata.set(
    'grpc-status-details-bin',
    Buffer.from(Status.encode(Status.fromObject({ code, message, details })).finish()),
  );
  return { code, details: message, metadata };
}

const Struct = protobuf.Root.fromJSON(protobuf.common.get('google/protobuf/struct.proto')!).lookupType(
  'google.protobuf.Struct',
);

/** The size of a record as the server counts it (AppendRecordExtensions.CalculateSizeOnDisk). */
export function recordSize(record: AppendRecordsRequestMessage['records'][number]): number {
  const properties = Struct.encode(Struct.fromObject({ fields: record.properties })).finish().length;
  return record.data.length + properties + Buffer.byteLength(record.schema?.name ?? '');
}
