/** The gRPC client's pieces the store uses beneath its public API: $all read by a server-side filter, clients made and disposed (eventstoredb-event-store.ts). */
import { END, EventStoreDBClient, START, type AllStreamResolvedEvent, type ReadPosition } from '@eventstore/db-client';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import { ReadStream } from '@eventstore/db-client/dist/streams/utils/ReadStream.js';
import { convertGrpcEvent } from '@eventstore/db-client/dist/utils/convertGrpcEvent.js';

/** Server-side subscription filter (a .NET regex on the stream name): no system and no snapshot streams. */
export const VISIBLE_STREAM_REGEX = '^(?!\\$|snapshot-)';

/** The client's protected members that make its calls (channel, credentials, leader): used, not changed. */
export interface ClientCalls {
  GRPCStreamCreator<C, T>(
    Client: new (...args: never[]) => C,
    debugName: string,
    creator: (client: C) => T,
  ): () => Promise<T>;
  callArguments(options: object, callOptions?: object): [unknown, unknown];
}

/**
 * A forwards read of $all that the server filters by stream name (Streams.Read with `filter`, served by
 * KurrentDB's ReadAllForwardsFiltered; the search window is the count). It is the v6 client's own readAll
 * with the filter its subscribeToAll already sends, through the client's own call machinery.
 */
export function readAllVisible(
  client: EventStoreDBClient,
  from: ReadPosition,
  maxCount: number,
): ReadStream<AllStreamResolvedEvent> {
  const { ReadReq } = streamsPb;
  const all = new ReadReq.Options.AllOptions();
  if (from === START) all.setStart(new sharedPb.Empty());
  else if (from === END) all.setEnd(new sharedPb.Empty());
  else
    all.setPosition(
      new ReadReq.Options.Position().setCommitPosition(String(from.commit)).setPreparePosition(String(from.prepare)),
    );
  const expression = new ReadReq.Options.FilterOptions.Expression().setRegex(VISIBLE_STREAM_REGEX);
  const filter = new ReadReq.Options.FilterOptions()
    .setStreamIdentifier(expression)
    .setCount(new sharedPb.Empty())
    .setCheckpointintervalmultiplier(1);
  const options = new ReadReq.Options()
    .setAll(all)
    .setResolveLinks(false)
    .setCount(String(maxCount))
    .setUuidOption(new ReadReq.Options.UUIDOption().setString(new sharedPb.Empty()))
    .setFilter(filter)
    .setReadDirection(ReadReq.Options.ReadDirection.FORWARDS);
  const request = new ReadReq().setOptions(options);
  const calls = client as unknown as ClientCalls;
  const create = calls.GRPCStreamCreator(
    streamsGrpc.StreamsClient,
    'readAll',
    (grpcClient: InstanceType<typeof streamsGrpc.StreamsClient>) =>
      grpcClient.read(request, ...(calls.callArguments({}, { deadline: Infinity }) as [never, never])),
  );
  return new ReadStream(create, convertGrpcEvent, {});
}

/** Cancels a read's gRPC call and ends the Readable, so a pending iteration settles. */
export function cancelRead(read: {
  cancel(): Promise<void>;
  destroy(): void;
  on(event: 'error', listener: () => void): unknown;
}): void {
  read.on('error', () => undefined);
  void read.cancel().catch(() => undefined);
  read.destroy();
}

/** dispose() only cancels the client's calls; its gRPC channel (the TCP connection) must be closed too. */
/**
 * A client that appends through the per-call `Append`, never `BatchAppend`. The client's BatchAppend keeps one
 * table of pending answers for the whole process (its streams/appendToStream/batchAppend.js): an error on any
 * client's batch stream (a channel closed to reconnect, a retired client disposed, another store closed)
 * rejects and forgets every client's pending appends, and the server's later answer to one of them then throws
 * inside the library's stream handler, outside any promise, which ends the process
 * (test/eventstore/eventstoredb/eventstoredb-event-store.faults.test.ts). An `Append` call holds its own answer.
 * The client picks BatchAppend when the server lists it, so the probe is answered "no" for that one method.
 */
export function newClient(connectionString: string): EventStoreDBClient {
  const client = EventStoreDBClient.connectionString(connectionString);
  const probe = client as unknown as { supports: (method: unknown, feature?: unknown) => Promise<boolean> };
  const supports = probe.supports;
  probe.supports = (method, feature) =>
    method === streamsGrpc.StreamsService.batchAppend ? Promise.resolve(false) : supports(method, feature);
  // Every call asks for the leader (`requires-leader`). A follower serves reads that do not, from its copy,
  // which lags after an election: the fence check, the tail read after a conflict and snapshot loads would
  // read stale state, and since nothing fails the client would stay on the demoted node. A follower answers
  // a call that requires the leader with NotLeader, and the client reconnects to the leader.
  const calls = client as unknown as ClientCalls;
  // The client's own method, called back with .call(calls) below.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const callArguments = calls.callArguments;
  calls.callArguments = (options, callOptions) =>
    callArguments(
      { ...options, requiresLeader: (options as { requiresLeader?: boolean }).requiresLeader ?? true },
      callOptions,
    );
  return client;
}

export async function disposeClient(client: EventStoreDBClient): Promise<void> {
  await client.dispose().catch(() => undefined);
  const internals = client as unknown as { getChannel?: () => Promise<{ close(): void }> };
  await internals
    .getChannel?.()
    .then((channel) => channel.close())
    .catch(() => undefined);
}

/**
 * The connection string with one endpoint instead of its hosts (or its discovery host), its credentials and
 * settings kept: where a replaced client starts when a "not leader" answer named the leader.
 */
export function onEndpoint(connectionString: string, endpoint: { address: string; port: number }): string {
  return connectionString.replace(
    /^esdb(?:\+discover)?:\/\/((?:[^@/?]*@)?)[^/?]*/i,
    (_, credentials: string) => `esdb://${credentials}${endpoint.address}:${endpoint.port}`,
  );
}

/**
 * The v6 client only parses the `esdb` schemes; KurrentDB's schemes take the same settings.
 * `throwOnAppendFailure=false` is dropped: it turns a conflict into a silent "success".
 */
export function toEsdbConnectionString(connectionString: string): string {
  const esdb = connectionString
    .trim()
    .replace(/^(?:esdb|kurrentdb|kurrent)(\+discover)?:\/\//i, (_, discover?: string) =>
      discover ? 'esdb+discover://' : 'esdb://',
    );
  const [base, query] = esdb.split('?', 2) as [string, string | undefined];
  if (query === undefined) return esdb;
  const kept = query
    .split('&')
    .filter((pair) => pair.split('=')[0].toLowerCase().replace(/[_-]/g, '') !== 'throwonappendfailure');
  return kept.length > 0 ? `${base}?${kept.join('&')}` : base;
}
