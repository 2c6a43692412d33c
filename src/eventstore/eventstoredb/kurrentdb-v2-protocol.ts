/**
 * The protocol of KurrentDB's v2 `AppendRecords` call (a write with consistency checks on other streams'
 * revisions, served from 26.0.3), as the server's own definitions say it: the messages below are copied from
 * kurrent-io/KurrentDB `proto/kurrentdb/protocol/v2/streams/{streams,shared,errors}.proto` and
 * `proto/kurrent/rpc/errors.proto` (only those the call uses; comments and the error enums' options left
 * out), plus `google.rpc.Status`, `google.rpc.ErrorInfo` and `google.protobuf.Any`, which carry its errors in
 * the `grpc-status-details-bin` trailer. Parsed once by protobufjs (append-records.ts); a file of text rather
 * than a `.proto` beside it, so the build copies nothing but what tsc emits.
 */
export const APPEND_RECORDS_SERVICE = 'kurrentdb.protocol.v2.streams.StreamsService';

export const KURRENTDB_V2_STREAMS_PROTO = `
edition = "2023";

package kurrentdb.protocol.v2.streams;

import "google/protobuf/struct.proto";

service StreamsService {
  rpc AppendRecords(AppendRecordsRequest) returns (AppendRecordsResponse);
}

message AppendRecord {
  string record_id = 1;
  map<string, google.protobuf.Value> properties = 2;
  SchemaInfo schema = 3;
  bytes data = 4;
  string stream = 5;
}

enum ExpectedRevisionConstants {
  EXPECTED_REVISION_CONSTANTS_SINGLE_EVENT = 0;
  EXPECTED_REVISION_CONSTANTS_NO_STREAM = -1;
  EXPECTED_REVISION_CONSTANTS_ANY = -2;
  EXPECTED_REVISION_CONSTANTS_EXISTS = -4;
}

message AppendRecordsRequest {
  repeated AppendRecord records = 1;
  repeated ConsistencyCheck checks = 2;
}

message AppendRecordsResponse {
  repeated StreamRevision revisions = 1;
  sint64 position = 2;
}

message ConsistencyCheck {
  oneof type {
    StreamStateCheck stream_state = 1;
  }

  message StreamStateCheck {
    string stream = 1;
    sint64 expected_state = 2;
  }
}

enum SchemaFormat {
  SCHEMA_FORMAT_UNSPECIFIED = 0;
  SCHEMA_FORMAT_JSON        = 1;
  SCHEMA_FORMAT_PROTOBUF    = 2;
  SCHEMA_FORMAT_AVRO        = 3;
  SCHEMA_FORMAT_BYTES       = 4;
}

message SchemaInfo {
  SchemaFormat format = 1 [default = SCHEMA_FORMAT_UNSPECIFIED];
  string name = 2;
  string id = 3;
}

message StreamRevision {
  string stream = 1;
  sint64 revision = 2;
}
`;

export const KURRENTDB_V2_STREAMS_ERRORS_PROTO = `
syntax = "proto3";

package kurrentdb.protocol.v2.streams.errors;

message StreamRevisionConflictErrorDetails {
  string stream = 1;
  sint64 expected_revision = 2;
  sint64 actual_revision = 3;
}

message AppendRecordSizeExceededErrorDetails {
  string stream = 1;
  string record_id = 2;
  int32 size = 3;
  int32 max_size = 4;
}

message AppendTransactionSizeExceededErrorDetails {
  int32 size = 1;
  int32 max_size = 2;
}

message AppendConsistencyViolationErrorDetails {
  repeated ConsistencyViolation violations = 1;
}

message ConsistencyViolation {
  int32 check_index = 1;

  oneof type {
    StreamStateViolation stream_state = 2;
  }

  message StreamStateViolation {
    string stream = 1;
    sint64 expected_state = 2;
    sint64 actual_state = 3;
  }
}
`;

export const KURRENT_RPC_ERRORS_PROTO = `
syntax = "proto3";

package kurrent.rpc;

message NotLeaderNodeErrorDetails {
  NodeInfo current_leader = 1;

  message NodeInfo {
    string host = 1;
    int32 port = 2;
    optional string node_id = 3;
  }
}
`;

/** google/rpc/status.proto and google/rpc/error_details.proto (ErrorInfo), with google/protobuf/any.proto. */
export const GOOGLE_RPC_PROTO = `
syntax = "proto3";

package google.rpc;

import "google/protobuf/any.proto";

message Status {
  int32 code = 1;
  string message = 2;
  repeated google.protobuf.Any details = 3;
}

message ErrorInfo {
  string reason = 1;
  string domain = 2;
  map<string, string> metadata = 3;
}
`;
