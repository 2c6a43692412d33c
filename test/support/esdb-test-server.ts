/**
 * A PROTOCOL TEST DOUBLE of EventStoreDB / KurrentDB, not a database.
 *
 * An in-process gRPC server (@grpc/grpc-js) that implements, on the generated service definitions that
 * @eventstore/db-client ships, the calls that client makes for this gateway: `Streams.Read` (streams and
 * $all, forwards and backwards, filtered subscriptions to $all), `Streams.Append`, `Streams.BatchAppend`,
 * `Streams.Delete` (soft delete) and `ServerFeatures.GetSupportedMethods`; and the v2 `AppendRecords` the
 * gateway makes itself ([V2]). Everything lives in memory on a
 * single node; there is no auth, TLS, scavenging, projection or persistent subscription.
 *
 * The semantics that matter to the adapter follow the server. Sources (kurrent-io/KurrentDB, master):
 * - [CC] src/KurrentDB.Core/Services/Storage/ReaderIndex/IndexWriter.cs `CheckCommit`: expected-revision
 *   checks and idempotency. `any`/`stream_exists` re-appends are recognised only through `_committedEvents`,
 *   an in-memory bounded cache (lost on restart); an expected revision below the head is checked against the
 *   stored events (strong); an expected revision equal to the head is never checked (appends again).
 *   CorruptedIdempotency (some ids written, some not) answers WrongExpectedVersion
 *   (Services/Storage/StorageWriterService.cs).
 * - [RD] src/KurrentDB.Core/Services/Transport/Grpc/Streams.Read.cs: a missing or deleted stream answers
 *   `stream_not_found`; subscriptions answer `confirmation` first, then events, `caught_up` once live;
 *   filtered subscriptions send `checkpoint`s. A filtered read of $all (ReadAllForwardsFiltered) counts and
 *   sends only the events that pass the filter. Reading $all from a position includes the event there;
 *   subscribing from a position starts strictly after it (docs: "Subscriptions" / "Reading events").
 * - [AP] Streams.Append.cs / Streams.BatchAppend.cs: results and errors (WrongExpectedVersion details,
 *   `maximum-append-size-exceeded`, `access-denied`, `stream-deleted` trailers from Grpc/RpcExceptions.cs;
 *   BatchAppend answers a google.rpc.Status per correlation id). `MaxAppendSize` and its default: [VS].
 *   Since 25.0 `Append` also refuses any one event larger than `MaxAppendEventSize` (unlimited by default on
 *   25.0, 16 MiB from 25.1: [VS]), checked event by event before the total, with the `maximum-append-event-size-exceeded` trailer; an event's size is its data, its
 *   metadata and twice its type's length (Data/Event.cs `SizeOnDisk`). Only `Append` checks it here: the
 *   client's generated protos lack BatchAppend's MaximumAppendEventSizeExceeded detail, and the gateway
 *   never uses BatchAppend.
 * - [MD] docs "Stream metadata" / "Deleting streams": `$maxCount` hides all but the last n events of a
 *   stream from stream reads; a soft delete writes `$tb` (truncate before) = last revision + 1 into the
 *   `$$stream` metadata stream, the stream then reads as not found and a later append continues its
 *   revisions. $all keeps every record of a truncated or deleted stream until a scavenge.
 * - [IP] Services/Storage/StorageReaderWorker.All.cs: a read of $all from a position inside the log where no
 *   record starts fails (InvalidReadException → ReadAllResult.InvalidPosition, "Trying to read from an invalid
 *   position." in Grpc/RpcExceptions.cs); past the end of the log it is simply empty.
 * - [FT] ServerFeatures.cs: the supported methods, BatchAppend among them (a stock client then appends
 *   through BatchAppend, see the client's streams/appendToStream/index.ts; the gateway's does not, see
 *   newClient in src/eventstore/eventstoredb/eventstoredb-event-store.ts).
 * - Positions are byte offsets of records in the transaction log, commit == prepare for gRPC appends.
 *
 * - [CL] A cluster (`new EsdbTestServer({ nodes: 3 })`, startEsdbTestCluster): every node serves the same log
 *   (replication is instant here), one is the leader. Services/VNode/ClusterVNodeController.cs: a node that
 *   is not the leader refuses writes, and reads asking for the leader (`requires-leader`), with NotHandled
 *   NotLeader, which Grpc/RpcExceptions.cs `LeaderInfo` answers as NOT_FOUND "Leader info available" with the
 *   trailers `exception: not-leader`, `leader-endpoint-host`, `leader-endpoint-port`; a node that knows no
 *   leader (an election) answers NotReady: UNAVAILABLE "Server Is Not Ready". Reads that do not ask for the
 *   leader are served by any node from its copy. Every node answers `Gossip.Read` (Services/Transport/Grpc/
 *   Gossip.cs) with the members, their state and liveness: what `esdb://a,b,c` and `esdb+discover://` read.
 *   The idempotency cache of `any` appends [CC] is the leader's memory: lost at a leader change.
 * - [VS] Limits by release (ClusterVNodeOptions.cs): 24.10 and 25.0 take 1 MiB per append (`MaxAppendSize`)
 *   and no limit per event (25.0's `MaxAppendEventSize` is int.MaxValue; 24.10 has none); 25.1 and later take
 *   256 MiB per append (TFConsts.ChunkSize) and 16 MiB per event (TFConsts.MaxLogRecordSize). Every release
 *   caps one gRPC message of the Streams service at TFConsts.EffectiveMaxLogRecordSize (16 MiB − 10,000 bytes,
 *   ClusterVNodeStartup.cs `MaxReceiveMessageSize`): one proposed event beyond it is refused by gRPC itself
 *   with RESOURCE_EXHAUSTED, before any exception trailer.
 * - [TO] Streams.Append.cs: a commit (or prepare, or forward) timeout answers ABORTED "Operation timed out";
 *   the write may still commit afterwards.
 * - [V2] KurrentDB.Api.V2 Modules/Streams/StreamsService.cs (26.0.3): `AppendRecords`, records of any streams with
 *   consistency checks on any streams' states, evaluated before one write; its errors are google.rpc.Status
 *   details (Infrastructure/Errors/RpcExceptions.cs; a follower answers NotLeaderNode with the leader, a node in
 *   an election ServerNotReady: Infrastructure/ApiCallback.cs). Served, and listed by GetSupportedMethods (in
 *   lower case, as ServerFeatures.cs lists every `kurrentdb.protocol` method), when the release is 26.0.3 or later;
 *   an older release answers UNIMPLEMENTED, and so does `serveAppendRecords = false` (the v2 API turned off).
 *   The `.proto` files it loads are the server's, verbatim (test/support/kurrentdb-proto/).
 *
 * Fault injection: `fail(method, fault, times)` answers the next calls of a method with UNAVAILABLE,
 * DEADLINE_EXCEEDED, access denied, a commit timeout whose write commits `commitLaterMs` later, or not at all
 * (stall); `dropSubscriptions()` ends every live subscription with an error; `blackHoleSubscriptions(ms)`
 * sends nothing more on any subscription (nor on those opened meanwhile) until, `ms` later, the client's
 * keep-alive gives up and they end with UNAVAILABLE; `denyAll` refuses reads and subscriptions of $all as to a
 * user without the right (access denied); `restart()` shuts the server down and starts it on the same port
 * with the same log but an empty idempotency cache, as a real node restart does. On a cluster:
 * `killLeader()`, `elect(i)`, `restartNode(i)`, `failover()`, and `namesItself` (a node that, during an
 * election, answers "not leader" naming itself).
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import serverFeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb.js';
import gossipGrpc from '@eventstore/db-client/generated/gossip_grpc_pb.js';
import gossipPb from '@eventstore/db-client/generated/gossip_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type * as S from '@eventstore/db-client/generated/streams_pb.js';
import { releaseChecksWrites } from '../../src/eventstore/eventstoredb/append-records.js';
import {
  type AppendRecordsRequestMessage,
  appendRecordsService,
  fieldsToJson,
  recordSize,
  v2Error,
} from './kurrentdb-v2-codec.js';

const { ReadResp, AppendResp, BatchAppendResp, DeleteResp } = streamsPb;

export type Method = 'read' | 'subscribe' | 'append' | 'appendRecords' | 'features' | 'delete';
export type Fault = 'unavailable' | 'deadline' | 'access_denied' | 'stream_deleted' | 'stall' | 'commit_timeout';
export type NodeState = 'leader' | 'follower' | 'electing' | 'down';

interface ClusterNode {
  index: number;
  port: number;
  server: grpc.Server | undefined;
  state: NodeState;
  instanceId: string;
  /** During an election, answers "not leader" naming itself instead of "not ready". */
  namesItself: boolean;
}

/** [VS] the limits of a KurrentDB release. */
export function limitsOf(version: string): { maxAppendSize: number; maxAppendEventSize: number } {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  if (major > 25 || (major === 25 && minor >= 1))
    return { maxAppendSize: 256 * 1024 * 1024, maxAppendEventSize: 16 * 1024 * 1024 };
  return { maxAppendSize: 1024 * 1024, maxAppendEventSize: Number.POSITIVE_INFINITY };
}

/** [VS] TFConsts.EffectiveMaxLogRecordSize: the largest gRPC message the Streams service receives. */
export const MAX_RECEIVE_MESSAGE_SIZE = 16 * 1024 * 1024 - 10_000;

interface LogRecord {
  id: string;
  streamId: string;
  revision: number;
  type: string;
  contentType: string;
  data: Uint8Array;
  metadata: Uint8Array;
  /** 100 ns ticks since the Unix epoch, as the server sends `created` (Grpc/MetadataHelpers.cs). */
  created: bigint;
  position: bigint;
}

interface StreamState {
  events: LogRecord[];
}

type Expected = 'any' | 'no_stream' | 'stream_exists' | number;

interface Proposed {
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  metadata: Uint8Array;
}

type AppendOutcome =
  | { ok: true; revision: number; position: bigint }
  | { ok: false; error: 'wrong_expected_version'; current: number; expected: Expected }
  | { ok: false; error: 'stream_deleted' | 'access_denied' }
  | { ok: false; error: 'max_append_size'; max: number }
  | { ok: false; error: 'max_append_event_size'; eventId: string; size: number; max: number };

/** [AP] Data/Event.cs SizeOnDisk. */
const sizeOnDisk = (event: Proposed) => event.data.length + event.metadata.length + event.type.length * 2;
const COMMITTED_EVENTS_CACHE = 100_000; // [CC] bounded
const CHECKPOINT_WINDOW = 32; // [RD] filtered subscriptions: a checkpoint per window × multiplier events

interface LiveSubscription {
  call: grpc.ServerWritableStream<S.ReadReq, S.ReadResp>;
  /** Index into the log of the next record to consider. */
  cursor: number;
  filter: (record: LogRecord) => boolean;
  checkpointEvery: number;
  sinceCheckpoint: number;
  caughtUp: boolean;
  waitingForDrain: boolean;
  uuidAsString: boolean;
  node: ClusterNode;
  /** Black-holed: nothing more is sent on it until it is ended. */
  silenced: boolean;
}

export interface EsdbTestServerOptions {
  /** Nodes of the cluster (default 1: a single node). */
  nodes?: number;
  /** The release it plays ([VS]): its limits, and the version GetSupportedMethods reports. */
  version?: string;
}

export class EsdbTestServer {
  private readonly nodes: ClusterNode[];
  /** The release reported by GetSupportedMethods. */
  readonly version: string;
  /** [VS] `MaxAppendSize`. */
  maxAppendSize: number;
  /** The transaction log ("disk"): survives restart(). */
  private readonly log: LogRecord[] = [];
  private readonly streams = new Map<string, StreamState>();
  private nextPosition = 0n;
  /** [CC] `_committedEvents`: event id → where it was written; memory only. */
  private committedEvents = new Map<string, { streamId: string; revision: number }>();
  private readonly subscriptions = new Set<LiveSubscription>();
  private readonly faults = new Map<Method, Array<Fault>>();
  private readonly stalled = new Set<{ node: ClusterNode; end(): void }>();
  /** Appends are answered this much later (a slow disk or a busy leader). */
  appendDelayMs = 0;
  /** [AP] `MaxAppendEventSize`: the largest one event `Append` takes; a test lowers it as an operator may. */
  maxAppendEventSize: number;
  /** [TO] how long after its timeout a write answered `commit_timeout` commits. */
  commitLaterMs = 100;
  /** Reads and subscriptions of $all are refused (access denied), as to a user without the right. */
  denyAll = false;
  private blackHole: NodeJS.Timeout | undefined;
  /** Answers "not leader" given, for tests that assert the redirects a client needed. */
  notLeaderAnswers = 0;
  /** [CL] `Gossip.Read` calls answered: a client looking for the leader (tests wait on these, not a time). */
  gossipReads = 0;
  /** The `connection-name` of every call: one per client the gateway made. */
  readonly connectionNames = new Set<string>();
  /** Append calls received whole, and settled (answered, or dropped when cancelled): tests wait on these, not a time. */
  appendRequests = { received: 0, settled: 0 };
  /** Counts of calls per method, for tests that assert what the client did. */
  readonly calls: Record<Method, number> = {
    read: 0,
    subscribe: 0,
    append: 0,
    appendRecords: 0,
    features: 0,
    delete: 0,
  };
  /**
   * [V2] Whether the release's AppendRecords is served: true from 26.0.3 (listed by GetSupportedMethods then);
   * false answers UNIMPLEMENTED all the same, as a server whose v2 API is turned off.
   */
  serveAppendRecords: boolean;
  /** Called as a write (Append or AppendRecords) arrives, before the server checks it: a test moves a lease there. */
  beforeWrite: ((streamId: string) => void) | undefined;
  /** Events sent by reads and subscriptions of $all, for tests that assert what crossed the wire. */
  allEventsSent = 0;
  /** Calls without `requires-leader: true`: a follower of a real cluster would serve those reads from its own copy. */
  callsNotRequiringLeader = 0;

  constructor(options: EsdbTestServerOptions = {}) {
    this.version = options.version ?? '24.10.0';
    const limits = limitsOf(this.version);
    this.maxAppendSize = limits.maxAppendSize;
    this.maxAppendEventSize = limits.maxAppendEventSize;
    this.serveAppendRecords = releaseChecksWrites(this.version);
    this.nodes = Array.from({ length: Math.max(1, options.nodes ?? 1) }, (_, index) => ({
      index,
      port: 0,
      server: undefined,
      state: index === 0 ? 'leader' : 'follower',
      instanceId: randomUUID(),
      namesItself: false,
    }));
  }

  /** The port of the first node (of the single node). */
  get port(): number {
    return this.nodes[0].port;
  }

  /** The connection string of the running server: a single node's, or every node's as gossip seeds. */
  get url(): string {
    return `esdb://${this.nodes.map((node) => `127.0.0.1:${node.port}`).join(',')}?tls=false`;
  }

  /** `esdb+discover://` on the first node: the client reads the members from its gossip. */
  get discoverUrl(): string {
    return `esdb+discover://127.0.0.1:${this.nodes[0].port}?tls=false`;
  }

  /** The URL of one node alone (a single-host URL, or a load balancer that landed there). */
  nodeUrl(index: number): string {
    return `esdb://127.0.0.1:${this.nodes[index].port}?tls=false`;
  }

  nodeState(index: number): NodeState {
    return this.nodes[index].state;
  }

  get leaderIndex(): number | undefined {
    return this.nodes.find((node) => node.state === 'leader')?.index;
  }

  /** Starts every node; the first on `port` when given (its earlier port on a restart). */
  async start(port?: number): Promise<this> {
    // A fresh node writes a few system records before anything else; readers of $all must skip them.
    if (this.log.length === 0) {
      this.nextPosition = 1_024n;
      this.write('$$$scavenges', [systemEvent('$metadata', { $maxAge: 2_592_000 })]);
      this.write('$settings', [systemEvent('$settings', { $userStreamAcl: {} })]);
    }
    for (const node of this.nodes) {
      if (node.state === 'down') continue;
      await this.startNode(node, node.index === 0 && port !== undefined ? port : node.port);
    }
    return this;
  }

  private async startNode(node: ClusterNode, port: number): Promise<void> {
    // [VS] the Streams service receives no message over EffectiveMaxLogRecordSize (RESOURCE_EXHAUSTED beyond).
    const server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_SIZE });
    server.addService(streamsGrpc.StreamsService, {
      read: (call: grpc.ServerWritableStream<S.ReadReq, S.ReadResp>) => this.onRead(call, node),
      append: (
        call: grpc.ServerReadableStream<S.AppendReq, S.AppendResp>,
        callback: grpc.sendUnaryData<S.AppendResp>,
      ) => this.onAppend(call, callback, node),
      batchAppend: (call: grpc.ServerDuplexStream<S.BatchAppendReq, S.BatchAppendResp>) => this.onBatchAppend(call),
      delete: (call: grpc.ServerUnaryCall<S.DeleteReq, S.DeleteResp>, callback: grpc.sendUnaryData<S.DeleteResp>) =>
        this.onDelete(call, callback, node),
      tombstone: (_call: unknown, callback: grpc.sendUnaryData<never>) =>
        callback({ code: grpc.status.UNIMPLEMENTED, details: 'tombstone is not implemented by the test double' }),
    });
    if (releaseChecksWrites(this.version)) {
      server.addService(appendRecordsService, {
        appendRecords: (
          call: grpc.ServerUnaryCall<AppendRecordsRequestMessage, unknown>,
          callback: grpc.sendUnaryData<unknown>,
        ) => this.onAppendRecords(call, callback, node),
      });
    }
    server.addService(serverFeaturesGrpc.ServerFeaturesService, {
      getSupportedMethods: (_call: unknown, callback: grpc.sendUnaryData<serverFeaturesPb.SupportedMethods>) =>
        this.onFeatures(callback),
    });
    server.addService(gossipGrpc.GossipService, {
      read: (_call: unknown, callback: grpc.sendUnaryData<gossipPb.ClusterInfo>) => {
        this.gossipReads++;
        callback(null, this.gossip());
      },
    });
    node.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    node.server = server;
  }

  private async stopNode(node: ClusterNode): Promise<void> {
    for (const stalled of [...this.stalled]) {
      if (stalled.node !== node) continue;
      this.stalled.delete(stalled);
      stalled.end();
    }
    for (const subscription of [...this.subscriptions])
      if (subscription.node === node) this.subscriptions.delete(subscription);
    node.server?.forceShutdown();
    node.server = undefined;
  }

  /** [CL] the members as every node's gossip reports them. */
  private gossip(): gossipPb.ClusterInfo {
    const info = new gossipPb.ClusterInfo();
    const { VNodeState } = gossipPb.MemberInfo;
    for (const node of this.nodes) {
      const member = new gossipPb.MemberInfo();
      member.setInstanceId(new sharedPb.UUID().setString(node.instanceId));
      member.setTimeStamp(String(BigInt(Date.now()) * 10_000n));
      member.setState(
        node.state === 'leader'
          ? VNodeState.LEADER
          : node.state === 'follower'
            ? VNodeState.FOLLOWER
            : node.state === 'electing'
              ? node.namesItself
                ? VNodeState.PRELEADER
                : VNodeState.UNKNOWN
              : VNodeState.SHUTDOWN,
      );
      member.setIsAlive(node.state !== 'down');
      member.setHttpEndPoint(new gossipPb.EndPoint().setAddress('127.0.0.1').setPort(node.port));
      info.addMembers(member);
    }
    return info;
  }

  /**
   * [CL] The leader dies: its calls end, the others know no leader (they answer "not ready", or "not leader"
   * naming themselves when `namesItself`), and the `any` idempotency cache is gone. Answers its index.
   */
  async killLeader(): Promise<number> {
    const leader = this.nodes.find((node) => node.state === 'leader');
    if (!leader) throw new Error('no leader to kill');
    leader.state = 'down';
    await this.stopNode(leader);
    for (const node of this.nodes) if (node.state !== 'down') node.state = 'electing';
    this.committedEvents = new Map();
    return leader.index;
  }

  /** [CL] `index` wins the election: the other live nodes follow it. */
  elect(index: number): void {
    for (const node of this.nodes) {
      if (node.state === 'down') continue;
      node.state = node.index === index ? 'leader' : 'follower';
      node.namesItself = false;
    }
  }

  /** [CL] A node during an election answers "not leader" with its own endpoint (a stale or premature claim). */
  nameItself(index: number): void {
    this.nodes[index].namesItself = true;
  }

  /** [CL] A dead node comes back, on its port, as a follower (or electing, when there is no leader). */
  async restartNode(index: number): Promise<void> {
    const node = this.nodes[index];
    if (node.state !== 'down') return;
    node.state = this.leaderIndex === undefined ? 'electing' : 'follower';
    await this.startNode(node, node.port);
  }

  /** [CL] Kills the leader, elects the next live node `electionMs` later, then starts the old leader again as a follower. */
  async failover(electionMs = 300): Promise<{ from: number; to: number }> {
    const from = await this.killLeader();
    await new Promise((resolve) => setTimeout(resolve, electionMs));
    const to =
      this.nodes.find((node) => node.state !== 'down' && node.index > from)?.index ??
      this.nodes.find((node) => node.state !== 'down')!.index;
    this.elect(to);
    await this.restartNode(from);
    return { from, to };
  }

  /** Shuts the node down hard (every call fails) and starts it again on the same port with the same log. */
  async restart(downMs = 0): Promise<void> {
    await this.stop();
    this.committedEvents = new Map(); // [CC] the cache is memory only
    if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
    await this.start(this.port);
  }

  async stop(): Promise<void> {
    clearTimeout(this.blackHole);
    this.blackHole = undefined;
    for (const node of this.nodes) await this.stopNode(node);
    this.subscriptions.clear();
  }

  /** The next `times` calls of `method` meet `fault`. */
  fail(method: Method, fault: Fault, times = 1): void {
    const queue = this.faults.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(fault);
    this.faults.set(method, queue);
  }

  /** Ends every live subscription with an error, as a server does for a slow or dropped subscriber. */
  dropSubscriptions(code: grpc.status = grpc.status.UNAVAILABLE): number {
    const dropped = [...this.subscriptions];
    this.subscriptions.clear();
    for (const subscription of dropped)
      subscription.call.emit('error', { code, details: 'subscription dropped by the test server' });
    return dropped.length;
  }

  /**
   * Every subscription, and each one opened meanwhile, gets nothing more (no event, no checkpoint, no
   * confirmation) while other calls work, until `keepAliveGivesUpMs` later they end with UNAVAILABLE, as the
   * client's keep-alive ends a call nothing answers on. Infinity: until `endBlackHole()`.
   */
  blackHoleSubscriptions(keepAliveGivesUpMs = 20_000): void {
    clearTimeout(this.blackHole);
    this.blackHoleActive = true;
    for (const subscription of this.subscriptions) subscription.silenced = true;
    if (Number.isFinite(keepAliveGivesUpMs)) this.blackHole = setTimeout(() => this.endBlackHole(), keepAliveGivesUpMs);
  }

  /** Ends the black hole: the silenced subscriptions end with UNAVAILABLE; new ones work again. */
  endBlackHole(): void {
    clearTimeout(this.blackHole);
    this.blackHole = undefined;
    this.blackHoleActive = false;
    for (const subscription of [...this.subscriptions]) {
      if (!subscription.silenced) continue;
      this.subscriptions.delete(subscription);
      subscription.call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'keepalive timeout' });
    }
  }

  private blackHoleActive = false;

  get liveSubscriptions(): number {
    return this.subscriptions.size;
  }

  /** Every record of $all, system ones included, as a scavenge-less server keeps them. */
  allRecords(): ReadonlyArray<Readonly<LogRecord>> {
    return this.log;
  }

  // ---------------------------------------------------------------------------------------------------
  // The write path

  private currentRevision(streamId: string): number {
    return (this.streams.get(streamId)?.events.length ?? 0) - 1;
  }

  /** [MD] the latest `$metadata` of a stream, or {}. */
  metadataOf(streamId: string): Record<string, unknown> {
    const meta = this.streams.get(`$$${streamId}`)?.events.at(-1);
    if (!meta) return {};
    try {
      return JSON.parse(Buffer.from(meta.data).toString('utf8')) as Record<string, unknown>;
    } catch {
      return {};
    }
  }

  private isSoftDeleted(streamId: string): boolean {
    const tb = this.metadataOf(streamId).$tb;
    return typeof tb === 'number' && tb > this.currentRevision(streamId) && this.currentRevision(streamId) >= 0;
  }

  /** [MD] first revision a stream read may return: `$tb` and `$maxCount` both truncate. */
  private firstVisible(streamId: string): number {
    const meta = this.metadataOf(streamId);
    const last = this.currentRevision(streamId);
    let first = 0;
    if (typeof meta.$tb === 'number') first = Math.max(first, meta.$tb);
    if (typeof meta.$maxCount === 'number') first = Math.max(first, last - meta.$maxCount + 1);
    return first;
  }

  /** [CC] CheckCommit, then the write. */
  append(streamId: string, expected: Expected, proposed: readonly Proposed[], checkEventSize = false): AppendOutcome {
    let size = 0;
    for (const event of proposed) {
      const eventSize = sizeOnDisk(event);
      if (checkEventSize && eventSize > this.maxAppendEventSize) {
        return {
          ok: false,
          error: 'max_append_event_size',
          eventId: event.id,
          size: eventSize,
          max: this.maxAppendEventSize,
        };
      }
      size += eventSize;
    }
    if (size > this.maxAppendSize) return { ok: false, error: 'max_append_size', max: this.maxAppendSize };
    const current = this.currentRevision(streamId);
    const wrong = (): AppendOutcome => ({ ok: false, error: 'wrong_expected_version', current, expected });
    const events = this.streams.get(streamId)?.events ?? [];
    if (expected === 'stream_exists') {
      if (this.isSoftDeleted(streamId)) return wrong();
      if (current < 0 && this.currentRevision(`$$${streamId}`) < 0) return wrong();
    }
    if (expected === 'any' || expected === 'stream_exists') {
      // Weak idempotency: only the recently committed ids of this stream are known.
      let first: number | undefined;
      let last = -1;
      for (const id of proposed.map((e) => e.id)) {
        const hit = this.committedEvents.get(id);
        if (hit && hit.streamId === streamId) {
          first ??= hit.revision;
          last = hit.revision;
          continue;
        }
        if (first !== undefined) return wrong(); // CorruptedIdempotency
        return this.commit(streamId, proposed);
      }
      return { ok: true, revision: last, position: events[last].position };
    }
    const from = expected === 'no_stream' ? -1 : expected;
    if (from < current) {
      // Strong idempotency: the ids must be the stored events right after the expected revision.
      for (let i = 0; i < proposed.length; i++) {
        const stored = events[from + 1 + i];
        if (stored?.id === proposed[i].id) continue;
        if (i > 0) return wrong(); // CorruptedIdempotency
        if (expected === 'no_stream' && this.isSoftDeleted(streamId)) return this.commit(streamId, proposed);
        return wrong();
      }
      const last = from + proposed.length;
      return { ok: true, revision: last, position: events[last].position };
    }
    if (from > current) return wrong();
    // Exactly at the head: written, whatever the ids.
    return this.commit(streamId, proposed);
  }

  private commit(streamId: string, proposed: readonly Proposed[]): AppendOutcome {
    const records = this.write(streamId, proposed);
    const last = records.at(-1)!;
    return { ok: true, revision: last.revision, position: last.position };
  }

  private write(streamId: string, proposed: readonly Proposed[]): LogRecord[] {
    let stream = this.streams.get(streamId);
    if (!stream) this.streams.set(streamId, (stream = { events: [] }));
    const created = BigInt(Date.now()) * 10_000n;
    const records = proposed.map((event) => {
      const record: LogRecord = {
        ...event,
        streamId,
        revision: stream.events.length,
        created,
        position: this.nextPosition,
      };
      // A prepare record: a header, the strings and the payloads.
      this.nextPosition += BigInt(64 + streamId.length + event.type.length + event.data.length + event.metadata.length);
      stream.events.push(record);
      this.log.push(record);
      if (this.committedEvents.size >= COMMITTED_EVENTS_CACHE) {
        this.committedEvents.delete(this.committedEvents.keys().next().value!);
      }
      this.committedEvents.set(record.id, { streamId, revision: record.revision });
      return record;
    });
    queueMicrotask(() => {
      for (const subscription of this.subscriptions) this.pump(subscription);
    });
    return records;
  }

  // ---------------------------------------------------------------------------------------------------
  // gRPC handlers

  /** Applies an injected fault; true when the call was answered (or swallowed) by it. */
  private faulted(
    method: Method,
    answer: (error: grpc.ServiceError | Partial<grpc.StatusObject>) => void,
    hang: { end(): void },
    node: ClusterNode,
  ): boolean {
    const fault = this.faults.get(method)?.[0];
    if (!fault || fault === 'commit_timeout') return false;
    this.faults.get(method)!.shift();
    if (fault === 'stall') {
      this.stalled.add({ node, end: () => hang.end() });
      return true;
    }
    if (fault === 'access_denied' || fault === 'stream_deleted') {
      // Grpc/RpcExceptions.cs: PermissionDenied / FailedPrecondition with the exception trailer.
      answer(appendError(fault, 'the-stream'));
      return true;
    }
    answer({
      code: fault === 'unavailable' ? grpc.status.UNAVAILABLE : grpc.status.DEADLINE_EXCEEDED,
      details: fault === 'unavailable' ? 'Server Is Not Ready' : 'Deadline Exceeded',
    });
    return true;
  }

  /**
   * [CL] A node that is not the leader refuses writes, and reads that ask for the leader: "not leader" with the
   * leader's endpoint, or "not ready" while it knows none. True when it answered.
   */
  private refusedOffLeader(
    node: ClusterNode,
    call: { metadata: grpc.Metadata },
    write: boolean,
    answer: (error: Partial<grpc.StatusObject>) => void,
  ): boolean {
    if (node.state === 'leader') return false;
    if (!write && call.metadata.get('requires-leader')[0] !== 'true') return false;
    const leader = this.nodes.find((candidate) => candidate.state === 'leader');
    const named = node.state === 'electing' && node.namesItself ? node : node.state === 'follower' ? leader : undefined;
    if (named) {
      this.notLeaderAnswers++;
      answer({
        code: grpc.status.NOT_FOUND,
        details: 'Leader info available',
        metadata: exceptionMetadata('not-leader', {
          'leader-endpoint-host': '127.0.0.1',
          'leader-endpoint-port': String(named.port),
        }),
      });
    } else answer({ code: grpc.status.UNAVAILABLE, details: 'Server Is Not Ready' });
    return true;
  }

  private onFeatures(callback: grpc.sendUnaryData<serverFeaturesPb.SupportedMethods>): void {
    this.calls.features++;
    if (
      this.faulted(
        'features',
        (e) => callback(e),
        {
          end: () => callback({ code: grpc.status.UNAVAILABLE }),
        },
        this.nodes[0],
      )
    )
      return;
    const methods = ['read', 'append', 'delete', 'batchappend'].map((name) => {
      const method = new serverFeaturesPb.SupportedMethod();
      method.setMethodName(name);
      method.setServiceName('event_store.client.streams.streams');
      return method;
    });
    // [V2] ServerFeatures.cs lists every gRPC method of a `kurrentdb.protocol` service too, in lower case.
    if (releaseChecksWrites(this.version))
      methods.push(
        new serverFeaturesPb.SupportedMethod()
          .setMethodName('appendrecords')
          .setServiceName('kurrentdb.protocol.v2.streams.streamsservice'),
      );
    const answer = new serverFeaturesPb.SupportedMethods();
    answer.setMethodsList(methods);
    answer.setEventStoreServerVersion(this.version);
    callback(null, answer);
  }

  private onAppend(
    call: grpc.ServerReadableStream<S.AppendReq, S.AppendResp>,
    callback: grpc.sendUnaryData<S.AppendResp>,
    node: ClusterNode,
  ): void {
    this.calls.append++;
    this.noteLeaderRequirement(call);
    call.on('error', () => undefined);
    if (this.refusedOffLeader(node, call, true, (e) => callback(e))) return;
    if (
      this.faulted(
        'append',
        (e) => callback(e),
        {
          end: () => callback({ code: grpc.status.UNAVAILABLE }),
        },
        node,
      )
    )
      return;
    // [TO] answered as timed out, written a little later all the same.
    const commitTimeout = this.faults.get('append')?.[0] === 'commit_timeout' && !!this.faults.get('append')!.shift();
    let streamId = '';
    let expected: Expected = 'any';
    const proposed: Proposed[] = [];
    call.on('data', (request: S.AppendReq) => {
      const options = request.getOptions();
      if (options) {
        streamId = streamName(options.getStreamIdentifier());
        expected = options.hasRevision()
          ? Number(options.getRevision())
          : options.hasNoStream()
            ? 'no_stream'
            : options.hasStreamExists()
              ? 'stream_exists'
              : 'any';
        return;
      }
      const message = request.getProposedMessage();
      if (message) proposed.push(toProposed(message));
    });
    call.on('error', () => undefined);
    call.on('end', async () => {
      this.appendRequests.received++;
      const reply: typeof callback = (...answer) => {
        this.appendRequests.settled++;
        callback(...answer);
      };
      if (this.appendDelayMs > 0) await new Promise((r) => setTimeout(r, this.appendDelayMs));
      // A client that died mid-call ends the request stream too (grpc-js emits 'end' before 'cancelled'):
      // KurrentDB's Append reads the request stream under the call's cancellation and writes nothing then.
      await new Promise((resolve) => setImmediate(resolve));
      if (call.cancelled) {
        this.appendRequests.settled++;
        return;
      }
      if (proposed.length === 0) {
        // An append of no events writes nothing and answers the stream's current revision, no position.
        const success = new AppendResp.Success().setNoPosition(new sharedPb.Empty());
        const current = this.currentRevision(streamId);
        if (current >= 0) success.setCurrentRevision(String(current));
        else success.setNoStream(new sharedPb.Empty());
        reply(null, new AppendResp().setSuccess(success));
        return;
      }
      this.beforeWrite?.(streamId);
      if (commitTimeout) {
        reply({ code: grpc.status.ABORTED, details: 'Operation timed out: Commit timed out.' });
        setTimeout(() => this.append(streamId, expected, proposed, true), this.commitLaterMs);
        return;
      }
      const outcome = this.append(streamId, expected, proposed, true);
      if (outcome.ok) {
        const success = new AppendResp.Success();
        success.setCurrentRevision(String(outcome.revision));
        const position = new AppendResp.Position();
        position.setCommitPosition(String(outcome.position));
        position.setPreparePosition(String(outcome.position));
        success.setPosition(position);
        reply(null, new AppendResp().setSuccess(success));
        return;
      }
      if (outcome.error === 'wrong_expected_version') {
        // [AP] Append answers a WrongExpectedVersion result (not a status) with both the old and new fields.
        const wev = new AppendResp.WrongExpectedVersion();
        if (outcome.current >= 0) wev.setCurrentRevision(String(outcome.current));
        else wev.setCurrentNoStream(new sharedPb.Empty());
        if (typeof outcome.expected === 'number') wev.setExpectedRevision(String(outcome.expected));
        else if (outcome.expected === 'no_stream') wev.setExpectedNoStream(new sharedPb.Empty());
        else if (outcome.expected === 'stream_exists') wev.setExpectedStreamExists(new sharedPb.Empty());
        else wev.setExpectedAny(new sharedPb.Empty());
        reply(null, new AppendResp().setWrongExpectedVersion(wev));
        return;
      }
      reply(
        outcome.error === 'max_append_event_size'
          ? eventSizeError(outcome)
          : outcome.error === 'max_append_size'
            ? appendSizeError(outcome.max)
            : appendError(outcome.error, streamId),
      );
    });
  }

  /**
   * [V2] AppendRecords (KurrentDB.Api.V2 StreamsService.cs): records of any streams and consistency checks on any
   * streams' states, all evaluated by the leader before one write; every failing check is reported
   * (AppendConsistencyViolation) and nothing is written. A stream written without a check is written at any
   * revision. Sizes are checked first, record by record (AppendRecordSizeExceeded) then in total
   * (AppendTransactionSizeExceeded). A record's properties become its metadata, read back through v1 as JSON
   * with `$schema.name` and `$schema.format` added (Data/EventRecord.cs SynthesizeMetadataFromProperties).
   */
  private onAppendRecords(
    call: grpc.ServerUnaryCall<AppendRecordsRequestMessage, unknown>,
    callback: grpc.sendUnaryData<unknown>,
    node: ClusterNode,
  ): void {
    this.calls.appendRecords++;
    this.noteLeaderRequirement(call);
    if (!this.serveAppendRecords) {
      callback({ code: grpc.status.UNIMPLEMENTED, details: 'Method not found: AppendRecords' });
      return;
    }
    if (node.state !== 'leader') {
      // ApiCallback.cs: NotHandled answers NotLeaderNode (with the leader) or ServerNotReady.
      const leader = this.nodes.find((candidate) => candidate.state === 'leader');
      if (node.state === 'follower' && leader) {
        this.notLeaderAnswers++;
        callback(
          v2Error(grpc.status.FAILED_PRECONDITION, 'The server is not the leader node', 'NOT_LEADER_NODE', 'server', {
            type: 'kurrent.rpc.NotLeaderNodeErrorDetails',
            value: { currentLeader: { host: '127.0.0.1', port: leader.port, nodeId: leader.instanceId } },
          }),
        );
      } else {
        callback(v2Error(grpc.status.UNAVAILABLE, 'The server is not yet ready', 'SERVER_NOT_READY', 'server'));
      }
      return;
    }
    if (
      this.faulted(
        'appendRecords',
        (e) => callback(e),
        { end: () => callback({ code: grpc.status.UNAVAILABLE }) },
        node,
      )
    )
      return;
    const { records, checks } = call.request;
    const errors = 'kurrentdb.protocol.v2.streams.errors';
    let total = 0;
    for (const record of records) {
      const size = recordSize(record);
      if (size > this.maxAppendEventSize) {
        callback(
          v2Error(grpc.status.INVALID_ARGUMENT, 'record too large', 'APPEND_RECORD_SIZE_EXCEEDED', 'streams', {
            type: `${errors}.AppendRecordSizeExceededErrorDetails`,
            value: { stream: record.stream, recordId: record.recordId, size, maxSize: this.maxAppendEventSize },
          }),
        );
        return;
      }
      if ((total += size) > this.maxAppendSize) {
        callback(
          v2Error(grpc.status.ABORTED, 'transaction too large', 'APPEND_TRANSACTION_SIZE_EXCEEDED', 'streams', {
            type: `${errors}.AppendTransactionSizeExceededErrorDetails`,
            value: { size: total, maxSize: this.maxAppendSize },
          }),
        );
        return;
      }
    }
    for (const stream of new Set(records.map((record) => record.stream))) this.beforeWrite?.(stream);
    const violations = checks.flatMap((check, checkIndex) => {
      if (!check.streamState) return [];
      const { stream, expectedState } = check.streamState;
      const expected = Number(expectedState);
      const actual = this.isSoftDeleted(stream) ? -5 : this.currentRevision(stream);
      const holds =
        expected >= 0
          ? actual === expected
          : expected === -2 || (expected === -1 && actual < 0) || (expected === -4 && actual >= 0);
      return holds ? [] : [{ checkIndex, streamState: { stream, expectedState: expected, actualState: actual } }];
    });
    if (violations.length > 0) {
      callback(
        v2Error(
          grpc.status.FAILED_PRECONDITION,
          'Append failed due to consistency violations.',
          'APPEND_CONSISTENCY_VIOLATION',
          'streams',
          { type: `${errors}.AppendConsistencyViolationErrorDetails`, value: { violations } },
        ),
      );
      return;
    }
    const revisions = new Map<string, number>();
    let position = 0n;
    for (const record of records) {
      const metadata = {
        ...fieldsToJson(record.properties),
        '$schema.name': record.schema?.name ?? '',
        '$schema.format': record.schema?.format === 1 ? 'Json' : 'Bytes',
      };
      const [written] = this.write(record.stream, [
        {
          id: (record.recordId || randomUUID()).toLowerCase(),
          type: record.schema?.name ?? '',
          contentType: record.schema?.format === 1 ? 'application/json' : 'application/octet-stream',
          data: record.data,
          metadata: Buffer.from(JSON.stringify(metadata)),
        },
      ]);
      revisions.set(record.stream, written.revision);
      position = written.position;
    }
    callback(null, {
      revisions: [...revisions].map(([stream, revision]) => ({ stream, revision: String(revision) })),
      position: String(position),
    });
  }

  private onBatchAppend(call: grpc.ServerDuplexStream<S.BatchAppendReq, S.BatchAppendResp>): void {
    this.calls.append++;
    const pending = new Map<string, { streamId: string; expected: Expected; proposed: Proposed[] }>();
    call.on('error', () => undefined);
    call.on('end', () => call.end());
    call.on('data', async (request: S.BatchAppendReq) => {
      if (this.appendDelayMs > 0) await new Promise((r) => setTimeout(r, this.appendDelayMs));
      const correlation = request.getCorrelationId()!;
      const key = correlation.getString();
      const identifier =
        (pending.get(key)?.streamId ?? request.getOptions()) === undefined
          ? undefined
          : request.getOptions()?.getStreamIdentifier();
      const respond = (build: (resp: S.BatchAppendResp) => void) => {
        const resp = new BatchAppendResp();
        resp.setCorrelationId(correlation);
        // The client names the stream of an error from this field.
        if (identifier) resp.setStreamIdentifier(identifier);
        build(resp);
        call.write(resp);
      };
      // Faults apply per append request on the shared stream: the client keeps one BatchAppend call open.
      const fault = this.faults.get('append')?.[0];
      if (fault && !pending.has(key)) {
        this.faults.get('append')!.shift();
        if (fault === 'stall') return; // never answered: the client's deadline decides
        if (fault === 'unavailable') {
          call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'Server Is Not Ready' });
          return;
        }
        respond((resp) => {
          if (fault === 'deadline')
            resp.setError(
              rpcStatus(grpc.status.DEADLINE_EXCEEDED, 'Timeout', 'event_store.client.Timeout', new sharedPb.Timeout()),
            );
          else if (fault === 'access_denied')
            resp.setError(
              rpcStatus(
                grpc.status.PERMISSION_DENIED,
                'Access Denied',
                'event_store.client.AccessDenied',
                new sharedPb.AccessDenied(),
              ),
            );
          else {
            resp.setError(
              rpcStatus(
                grpc.status.FAILED_PRECONDITION,
                'Stream Deleted',
                'event_store.client.StreamDeleted',
                new sharedPb.StreamDeleted(),
              ),
            );
          }
        });
        return;
      }
      let entry = pending.get(key);
      if (!entry) {
        const options = request.getOptions()!;
        const expected: Expected = options.hasStreamPosition()
          ? Number(options.getStreamPosition())
          : options.hasNoStream()
            ? 'no_stream'
            : options.hasStreamExists()
              ? 'stream_exists'
              : 'any';
        entry = { streamId: streamName(options.getStreamIdentifier()), expected, proposed: [] };
        pending.set(key, entry);
      }
      for (const message of request.getProposedMessagesList()) entry.proposed.push(toProposed(message));
      if (!request.getIsFinal()) return;
      pending.delete(key);
      const outcome = this.append(entry.streamId, entry.expected, entry.proposed);
      respond((resp) => {
        resp.setStreamIdentifier(new sharedPb.StreamIdentifier().setStreamName(Buffer.from(entry.streamId)));
        if (outcome.ok) {
          const success = new BatchAppendResp.Success();
          success.setCurrentRevision(String(outcome.revision));
          const position = new sharedPb.AllStreamPosition();
          position.setCommitPosition(String(outcome.position));
          position.setPreparePosition(String(outcome.position));
          success.setPosition(position);
          resp.setSuccess(success);
        } else if (outcome.error === 'wrong_expected_version') {
          const details = new sharedPb.WrongExpectedVersion();
          if (outcome.current >= 0) details.setCurrentStreamRevision(String(outcome.current));
          else details.setCurrentNoStream(new emptyPb.Empty());
          if (typeof outcome.expected === 'number') details.setExpectedStreamPosition(String(outcome.expected));
          else if (outcome.expected === 'no_stream') details.setExpectedNoStream(new emptyPb.Empty());
          else if (outcome.expected === 'stream_exists') details.setExpectedStreamExists(new emptyPb.Empty());
          else details.setExpectedAny(new emptyPb.Empty());
          resp.setError(
            rpcStatus(
              grpc.status.FAILED_PRECONDITION,
              'WrongExpectedVersion',
              'event_store.client.WrongExpectedVersion',
              details,
            ),
          );
        } else if (outcome.error === 'max_append_size') {
          resp.setError(
            rpcStatus(
              grpc.status.INVALID_ARGUMENT,
              `Maximum Append Size of ${outcome.max} Exceeded.`,
              'event_store.client.MaximumAppendSizeExceeded',
              new sharedPb.MaximumAppendSizeExceeded().setMaxappendsize(outcome.max),
            ),
          );
        } else if (outcome.error === 'stream_deleted') {
          const deleted = new sharedPb.StreamDeleted().setStreamIdentifier(
            new sharedPb.StreamIdentifier().setStreamName(Buffer.from(entry.streamId)),
          );
          resp.setError(
            rpcStatus(grpc.status.FAILED_PRECONDITION, 'Stream Deleted', 'event_store.client.StreamDeleted', deleted),
          );
        } else {
          resp.setError(
            rpcStatus(
              grpc.status.PERMISSION_DENIED,
              'Access Denied',
              'event_store.client.AccessDenied',
              new sharedPb.AccessDenied(),
            ),
          );
        }
      });
    });
  }

  /**
   * [MD] soft delete: the metadata stream gets `{"$tb": last revision + 1}` and nothing else (KurrentDB's
   * StorageWriterService writes only the truncate-before; the stream's other metadata is gone with it).
   */
  private onDelete(
    call: grpc.ServerUnaryCall<S.DeleteReq, S.DeleteResp>,
    callback: grpc.sendUnaryData<S.DeleteResp>,
    node: ClusterNode,
  ): void {
    this.calls.delete++;
    this.noteLeaderRequirement(call);
    if (this.refusedOffLeader(node, call, true, (e) => callback(e))) return;
    if (
      this.faulted(
        'delete',
        (e) => callback(e),
        {
          end: () => callback({ code: grpc.status.UNAVAILABLE }),
        },
        node,
      )
    )
      return;
    const options = call.request.getOptions()!;
    const streamId = streamName(options.getStreamIdentifier());
    const current = this.currentRevision(streamId);
    const expected: Expected = options.hasRevision()
      ? Number(options.getRevision())
      : options.hasNoStream()
        ? 'no_stream'
        : 'any';
    if ((expected === 'no_stream' && current >= 0) || (typeof expected === 'number' && expected !== current)) {
      callback({
        code: grpc.status.FAILED_PRECONDITION,
        details: 'Delete failed due to WrongExpectedVersion',
        metadata: exceptionMetadata('wrong-expected-version', {
          'stream-name': streamId,
          'expected-version': String(typeof expected === 'number' ? expected : -1),
          ...(current >= 0 ? { 'actual-version': String(current) } : {}),
        }),
      });
      return;
    }
    const meta = { $tb: current + 1 };
    const [record] = this.write(`$$${streamId}`, [systemEvent('$metadata', meta)]);
    const position = new DeleteResp.Position();
    position.setCommitPosition(String(record.position));
    position.setPreparePosition(String(record.position));
    callback(null, new DeleteResp().setPosition(position));
  }

  private noteLeaderRequirement(call: { metadata: grpc.Metadata }): void {
    if (call.metadata.get('requires-leader')[0] !== 'true') this.callsNotRequiringLeader++;
    const name = call.metadata.get('connection-name')[0];
    if (typeof name === 'string') this.connectionNames.add(name);
  }

  private onRead(call: grpc.ServerWritableStream<S.ReadReq, S.ReadResp>, node: ClusterNode): void {
    const options = call.request.getOptions()!;
    const subscribing = options.hasSubscription();
    const method: Method = subscribing ? 'subscribe' : 'read';
    this.calls[method]++;
    this.noteLeaderRequirement(call);
    call.on('error', () => undefined);
    if (this.refusedOffLeader(node, call, false, (e) => call.emit('error', e))) return;
    const hang = { end: () => call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'server shut down' }) };
    if (this.faulted(method, (e) => call.emit('error', e), hang, node)) return;
    if (this.denyAll && options.hasAll()) {
      // Grpc/RpcExceptions.cs AccessDenied: the user may not read $all.
      call.emit('error', appendError('access_denied', '$all'));
      return;
    }
    const uuidAsString = options.getUuidOption()?.hasString() ?? false;
    const forwards = options.getReadDirection() === streamsPb.ReadReq.Options.ReadDirection.FORWARDS;
    const count = options.hasCount()
      ? Math.min(Number(options.getCount()), Number.MAX_SAFE_INTEGER)
      : Number.MAX_SAFE_INTEGER;

    if (options.hasStream()) {
      const streamOptions = options.getStream()!;
      const streamId = streamName(streamOptions.getStreamIdentifier());
      const events = this.streams.get(streamId)?.events ?? [];
      const first = this.firstVisible(streamId);
      if (events.length === 0 || first > events.length - 1) {
        const notFound = new ReadResp.StreamNotFound().setStreamIdentifier(
          new sharedPb.StreamIdentifier().setStreamName(Buffer.from(streamId)),
        );
        call.write(new ReadResp().setStreamNotFound(notFound));
        call.end();
        return;
      }
      const last = events.length - 1;
      const from = streamOptions.hasRevision()
        ? Number(streamOptions.getRevision())
        : streamOptions.hasEnd()
          ? last
          : forwards
            ? 0
            : last;
      const selected: LogRecord[] = [];
      if (forwards)
        for (let r = Math.max(from, first); r <= last && selected.length < count; r++) selected.push(events[r]);
      else for (let r = Math.min(from, last); r >= first && selected.length < count; r--) selected.push(events[r]);
      for (const record of selected) call.write(readEvent(record, uuidAsString, false));
      call.end();
      return;
    }

    const all = options.getAll()!;
    const position = all.hasPosition() ? BigInt(all.getPosition()!.getCommitPosition()) : undefined;
    if (subscribing) {
      const filter = toFilter(options);
      // [RD] a subscription starts strictly after its position.
      const cursor = all.hasEnd() ? this.log.length : position === undefined ? 0 : this.indexAfter(position);
      const multiplier = options.getFilter()?.getCheckpointintervalmultiplier() || 1;
      const subscription: LiveSubscription = {
        call,
        cursor,
        filter,
        checkpointEvery: CHECKPOINT_WINDOW * multiplier,
        sinceCheckpoint: 0,
        caughtUp: false,
        waitingForDrain: false,
        uuidAsString,
        node,
        silenced: this.blackHoleActive,
      };
      this.subscriptions.add(subscription);
      call.on('cancelled', () => this.subscriptions.delete(subscription));
      call.on('close', () => this.subscriptions.delete(subscription));
      if (subscription.silenced) return;
      const confirmation = new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID());
      call.write(new ReadResp().setConfirmation(confirmation));
      this.pump(subscription);
      return;
    }
    // [IP] a position inside the log where no record starts cannot be read from.
    if (
      position !== undefined &&
      position > 0n &&
      !all.hasStart() &&
      !all.hasEnd() &&
      position < this.nextPosition &&
      this.log[this.indexAtOrAfter(position)]?.position !== position
    ) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'Trying to read from an invalid position.' });
      return;
    }
    // [RD] reading $all from a position includes the event at that position; backwards reads stop before it.
    // A filtered read counts only the events that pass.
    const passes = toFilter(options);
    const selected: LogRecord[] = [];
    if (forwards) {
      for (
        let i = position === undefined || all.hasStart() ? 0 : this.indexAtOrAfter(position);
        i < this.log.length && selected.length < count;
        i++
      ) {
        if (passes(this.log[i])) selected.push(this.log[i]);
      }
    } else {
      const start = all.hasEnd() || position === undefined ? this.log.length - 1 : this.indexAtOrAfter(position) - 1;
      for (let i = start; i >= 0 && selected.length < count; i--) if (passes(this.log[i])) selected.push(this.log[i]);
    }
    this.allEventsSent += selected.length;
    for (const record of selected) call.write(readEvent(record, uuidAsString, true));
    call.end();
  }

  private indexAtOrAfter(position: bigint): number {
    let low = 0;
    let high = this.log.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.log[mid].position < position) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private indexAfter(position: bigint): number {
    const at = this.indexAtOrAfter(position);
    return this.log[at]?.position === position ? at + 1 : at;
  }

  /** Sends what the subscriber has not seen yet, respecting the call's flow control. */
  private pump(subscription: LiveSubscription): void {
    if (subscription.waitingForDrain || subscription.silenced || !this.subscriptions.has(subscription)) return;
    const { call } = subscription;
    while (subscription.cursor < this.log.length) {
      const record = this.log[subscription.cursor++];
      let writable = true;
      if (subscription.filter(record)) {
        this.allEventsSent++;
        writable = call.write(readEvent(record, subscription.uuidAsString, true));
      } else if (++subscription.sinceCheckpoint >= subscription.checkpointEvery) {
        subscription.sinceCheckpoint = 0;
        const checkpoint = new ReadResp.Checkpoint();
        checkpoint.setCommitPosition(String(record.position));
        checkpoint.setPreparePosition(String(record.position));
        writable = call.write(new ReadResp().setCheckpoint(checkpoint));
      }
      if (!writable) {
        subscription.waitingForDrain = true;
        call.once('drain', () => {
          subscription.waitingForDrain = false;
          this.pump(subscription);
        });
        return;
      }
    }
    if (!subscription.caughtUp) {
      subscription.caughtUp = true;
      call.write(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()));
    }
  }
}

/** Starts a test server on a free loopback port. */
export async function startEsdbTestServer(): Promise<EsdbTestServer> {
  return new EsdbTestServer().start();
}

function streamName(identifier: sharedPb.StreamIdentifier | undefined): string {
  return Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');
}

function toProposed(message: S.AppendReq.ProposedMessage | S.BatchAppendReq.ProposedMessage): Proposed {
  const id = message.getId();
  const map = message.getMetadataMap();
  return {
    // The server parses ids as GUIDs and writes them back in canonical lower case.
    id: (id?.getString() ?? randomUUID()).toLowerCase(),
    type: map.get('type') ?? '',
    contentType: map.get('content-type') ?? 'application/octet-stream',
    data: message.getData_asU8(),
    metadata: message.getCustomMetadata_asU8(),
  };
}

function systemEvent(type: string, data: unknown): Proposed {
  return {
    id: randomUUID(),
    type,
    contentType: 'application/json',
    data: Buffer.from(JSON.stringify(data)),
    metadata: new Uint8Array(),
  };
}

function readEvent(record: LogRecord, uuidAsString: boolean, fromAll: boolean): S.ReadResp {
  const recorded = new ReadResp.ReadEvent.RecordedEvent();
  const id = new sharedPb.UUID();
  if (uuidAsString) id.setString(record.id);
  else {
    const hex = record.id.replaceAll('-', '');
    const structured = new sharedPb.UUID.Structured();
    structured.setMostSignificantBits(BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`)).toString());
    structured.setLeastSignificantBits(BigInt.asIntN(64, BigInt(`0x${hex.slice(16)}`)).toString());
    id.setStructured(structured);
  }
  recorded.setId(id);
  recorded.setStreamIdentifier(new sharedPb.StreamIdentifier().setStreamName(Buffer.from(record.streamId)));
  recorded.setStreamRevision(String(record.revision));
  recorded.setCommitPosition(String(record.position));
  recorded.setPreparePosition(String(record.position));
  recorded.getMetadataMap().set('type', record.type);
  recorded.getMetadataMap().set('content-type', record.contentType);
  recorded.getMetadataMap().set('created', String(record.created));
  recorded.setData(record.data);
  recorded.setCustomMetadata(record.metadata);
  const event = new ReadResp.ReadEvent().setEvent(recorded);
  if (fromAll) event.setCommitPosition(String(record.position));
  else event.setNoPosition(new sharedPb.Empty());
  return new ReadResp().setEvent(event);
}

/** [RD] stream-name or event-type filters, by regex (the server's is .NET, close enough here) or prefixes. */
function toFilter(options: S.ReadReq.Options): (record: LogRecord) => boolean {
  const filter = options.getFilter();
  if (!filter) return () => true;
  const onType = filter.hasEventType();
  const expression = onType ? filter.getEventType()! : filter.getStreamIdentifier()!;
  const regex = expression.getRegex();
  const prefixes = expression.getPrefixList();
  const test = regex
    ? (
        (re) => (value: string) =>
          re.test(value)
      )(new RegExp(regex))
    : (value: string) => prefixes.some((p) => value.startsWith(p));
  return (record) => test(onType ? record.type : record.streamId);
}

function exceptionMetadata(exception: string, extra: Record<string, string> = {}): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('exception', exception);
  for (const [key, value] of Object.entries(extra)) metadata.set(key, value);
  return metadata;
}

function appendSizeError(max: number): Partial<grpc.StatusObject> {
  return {
    code: grpc.status.INVALID_ARGUMENT,
    details: `Maximum Append Size of ${max} Exceeded.`,
    metadata: exceptionMetadata('maximum-append-size-exceeded', { 'maximum-append-size': String(max) }),
  };
}

function appendError(error: 'stream_deleted' | 'access_denied', streamId: string): Partial<grpc.StatusObject> {
  switch (error) {
    case 'stream_deleted':
      return {
        code: grpc.status.FAILED_PRECONDITION,
        details: `Event stream '${streamId}' is deleted.`,
        metadata: exceptionMetadata('stream-deleted', { 'stream-name': streamId }),
      };
    default:
      return {
        code: grpc.status.PERMISSION_DENIED,
        details: 'Access Denied',
        metadata: exceptionMetadata('access-denied'),
      };
  }
}

function eventSizeError(outcome: { eventId: string; size: number; max: number }): Partial<grpc.StatusObject> {
  return {
    code: grpc.status.INVALID_ARGUMENT,
    details: `Event with Id: ${outcome.eventId}, Size: ${outcome.size}, exceeds Maximum Append Event Size of ${outcome.max}.`,
    metadata: exceptionMetadata('maximum-append-event-size-exceeded', {
      'maximum-append-event-size': String(outcome.max),
      'event-id': outcome.eventId,
      'proposed-append-event-size': String(outcome.size),
    }),
  };
}

/** [AP] BatchAppend errors: a google.rpc.Status whose details name the error type. */
function rpcStatus(
  code: grpc.status,
  message: string,
  typeName: string,
  details: { serializeBinary(): Uint8Array },
): statusPb.Status {
  const status = new statusPb.Status();
  status.setCode(code as number);
  status.setMessage(message);
  const any = new anyPb.Any();
  any.pack(details.serializeBinary(), typeName);
  status.setDetails(any);
  return status;
}

/** Starts a three-node test cluster (node 0 the leader) on free loopback ports. */
export async function startEsdbTestCluster(
  options: Omit<EsdbTestServerOptions, 'nodes'> = {},
): Promise<EsdbTestServer> {
  return new EsdbTestServer({ ...options, nodes: 3 }).start();
}
