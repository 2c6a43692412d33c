/**
 * The EventStoreDB adapter on a three-node test cluster (test/support/esdb-test-server.ts, [CL]): followers that
 * answer "not leader", gossip, elections, subscriptions that go silent, commit timeouts, a user without the
 * right to read $all, and the size limits of each release.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type EventStore,
  StoreRefusedError,
  StoreUnavailableError,
  type StoredEvent,
} from '../../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { EsdbTestServer, startEsdbTestCluster, startEsdbTestServer } from '../../support/esdb-test-server.js';
import { eventually } from '../../support/eventually.js';
import { TestClock } from '../../support/test-clock.js';

const servers: EsdbTestServer[] = [];
const opened: EventStore[] = [];
const cluster = async () => {
  const server = await startEsdbTestCluster();
  servers.push(server);
  return server;
};
const open = async (url: string, options: Parameters<typeof openEventStoreDbStore>[1] = {}) => {
  const store = await openEventStoreDbStore(url, options);
  opened.push(store);
  return store;
};
const stream = () => `cluster-${randomUUID()}`;
const ev = (type: string, data: unknown = {}) => ({ type, data });

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((store) => store.close()));
  await Promise.allSettled(servers.splice(0).map((server) => server.stop()));
});

describe('EventStoreDB adapter on a cluster', () => {
  it('follows "not leader" from a follower to the leader: 8 concurrent appenders, every append written, a bounded number of clients (issue 31, reproduction 1)', async () => {
    const server = await cluster();
    // A single-host URL that lands on a follower (or a load balancer in front of the nodes).
    const store = await open(server.nodeUrl(1));
    const streams = Array.from({ length: 8 }, () => stream());
    const started = Date.now();
    const outcomes = await Promise.allSettled(
      streams.flatMap((s) => Array.from({ length: 5 }, (_, i) => store.append(s, [ev(`E${i}`)]))),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const s of streams) expect(await store.readStream(s)).toHaveLength(5);
    // Before: every "not leader" counted as a failure, a new client from the URL forgot the leader: 146 clients.
    expect(server.connectionNames.size).toBeLessThanOrEqual(2);
    expect(server.notLeaderAnswers).toBeLessThanOrEqual(16);
  });

  it('a client made again after failures starts at the leader last named, not at the URL (a follower again)', async () => {
    const server = await cluster();
    const clock = new TestClock({ running: true });
    const store = await open(server.nodeUrl(1), { operationDeadlineMs: 1_000, clock });
    await store.append(stream(), [ev('A')]);
    const redirects = server.notLeaderAnswers;
    expect(redirects).toBeGreaterThan(0);
    await clock.advance(1_100); // a client lives a second at least
    server.fail('read', 'stall', 2);
    for (let i = 0; i < 2; i++) {
      const reads = server.calls.read;
      const stalled = expect(store.readStream(stream())).rejects.toBeInstanceOf(StoreUnavailableError);
      await eventually(() => server.calls.read > reads, 'the read on the wire');
      await clock.advance(1_000);
      await stalled;
    }
    await store.append(stream(), [ev('B')]);
    expect(server.connectionNames.size).toBe(2);
    expect(server.notLeaderAnswers).toBe(redirects);
  });

  it('finds the leader through gossip, from the seeds of esdb://a,b,c and from esdb+discover://', async () => {
    const server = await cluster();
    for (const url of [server.url, server.discoverUrl]) {
      const store = await open(url);
      const s = stream();
      await store.append(s, [ev('A')], { expectedRevision: 'no_stream' });
      expect(await store.readStream(s)).toHaveLength(1);
    }
    expect(server.notLeaderAnswers).toBe(0);
  });

  it('rides out an election: calls under way while there is no leader are retried within their deadline', async () => {
    const server = await cluster();
    const store = await open(server.url, { operationDeadlineMs: 8_000 });
    const s = stream();
    await store.append(s, [ev('A')], { expectedRevision: 'no_stream' });
    await server.killLeader();
    // A node of the election names itself: a client that follows it must not loop on it.
    server.nameItself(2);
    const during = [store.append(s, [{ id: randomUUID(), ...ev('B') }], { expectedRevision: 0 }), store.readStream(s)];
    // The election lasts until the client library, on timers of its own, has looked for a leader through gossip
    // and found none, twice.
    const looked = server.gossipReads;
    await eventually(() => server.gossipReads >= looked + 2, 'the client looking for a leader during the election');
    server.elect(1);
    const [appended, read] = await Promise.all(during);
    expect(appended).toMatchObject({ nextExpectedRevision: 1 });
    expect((read as StoredEvent[]).length).toBeGreaterThanOrEqual(1);
    expect((await store.readStream(s)).map((e) => e.type)).toEqual(['A', 'B']);
    expect(server.connectionNames.size).toBeLessThanOrEqual(3);
  });

  it('answers 503 (StoreUnavailableError) when the election outlasts the deadline, and works once a leader is elected', async () => {
    const server = await cluster();
    const store = await open(server.url, { operationDeadlineMs: 600 });
    await server.killLeader();
    await expect(store.append(stream(), [ev('A')])).rejects.toBeInstanceOf(StoreUnavailableError);
    server.elect(2);
    const s = stream();
    await eventually(async () => (await store.append(s, [ev('B')])).nextExpectedRevision === 0, 'an append');
  });

  it('keeps working across leader failovers, with a bounded number of clients', async () => {
    const server = await cluster();
    const store = await open(server.url, { operationDeadlineMs: 5_000 });
    const s = stream();
    let written = 0;
    for (let round = 0; round < 3; round++) {
      const failing = server.failover(200);
      for (let i = 0; i < 5; i++) {
        await store.append(s, [{ id: randomUUID(), ...ev('E') }], { expectedRevision: written - 1 });
        written += 1;
      }
      await failing;
    }
    expect(await store.readStream(s)).toHaveLength(written);
    expect(server.connectionNames.size).toBeLessThanOrEqual(8);
  });

  it('makes no new client at a leader change: the client connects again by itself and finds the new leader', async () => {
    const server = await cluster();
    const clock = new TestClock({ running: true });
    const store = await open(server.url, { clock });
    const s = stream();
    let stopped = false;
    let written = 0;
    // Calls under way when the leader dies end CANCELLED, the next ones UNAVAILABLE (refused): both make the client
    // connect again through gossip. Counted as failures of the client, they replaced it at every change.
    const callers = Array.from({ length: 4 }, async () => {
      while (!stopped) {
        await store.append(s, [ev('E')]).then(
          () => (written += 1),
          () => undefined,
        );
        await store.readStream(s, { direction: 'backwards', maxCount: 1 }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    for (let round = 0; round < 4; round++) {
      // Written to the leader of this round, by a client a second old at least (a client lives that long).
      await eventually(() => written >= (round + 1) * 6, 'appends between the leader changes');
      await clock.advance(1_500);
      await server.failover(200);
    }
    stopped = true;
    await Promise.all(callers);
    await store.append(s, [ev('Last')]);
    expect(written).toBeGreaterThan(20);
    // Before: 5 (one more at each of the 4 changes).
    expect(server.connectionNames.size).toBe(1);
  });

  it('a black-holed subscription stays silent while appends work, then ends with StoreUnavailableError', async () => {
    const server = await startEsdbTestServer();
    servers.push(server);
    const store = await open(server.url);
    const s = stream();
    const marker = await store.append(stream(), [ev('Marker')]);
    const subscription = store.subscribe({ after: marker.position });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const batch of subscription) for (const e of batch) if (e.streamId === s) seen.push(e.type);
    })();
    await store.append(s, [ev('A')]);
    await eventually(() => seen.length === 1, 'the first event');
    server.blackHoleSubscriptions(800);
    await store.append(s, [ev('B')]);
    expect((await store.readStream(s)).map((e) => e.type)).toEqual(['A', 'B']);
    await expect(reading).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(seen).toEqual(['A']);
  });

  it('a commit timeout is a 503 whose write may commit later; a retry pinned by its expected revision is recognised', async () => {
    const server = await startEsdbTestServer();
    servers.push(server);
    const store = await open(server.url);
    const s = stream();
    const event = { id: randomUUID(), ...ev('A') };
    server.fail('append', 'commit_timeout');
    await expect(store.append(s, [event], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    await eventually(async () => (await store.readStream(s)).length === 1, 'the late commit');
    await expect(store.append(s, [event], { expectedRevision: 'no_stream' })).resolves.toMatchObject({
      nextExpectedRevision: 0,
    });
    expect(await store.readStream(s)).toHaveLength(1);
  });

  it('a user without the right to read $all: opening fails at once, naming the right', async () => {
    const server = await startEsdbTestServer();
    servers.push(server);
    server.denyAll = true;
    const started = Date.now();
    const error = await openEventStoreDbStore(server.url, { startupTimeoutMs: Number.POSITIVE_INFINITY }).catch(
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(StoreRefusedError);
    expect((error as Error).message).toMatch(/read \$all/);
  });

  it('maps an event over the largest gRPC message the server receives (RESOURCE_EXHAUSTED) to append_too_large', async () => {
    const server = await startEsdbTestServer();
    servers.push(server);
    // 17 MiB on the wire: slow on a loaded machine, and not what the deadline is about here.
    const store = await open(server.url, { operationDeadlineMs: 60_000 });
    const error = await store
      .append(stream(), [ev('Huge', { huge: 'x'.repeat(17 * 1024 * 1024) })])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRefusedError);
    expect(error).toMatchObject({ code: 'append_too_large' });
  }, 90_000);

  it("takes the limits of the server's release: 1 MiB per append on 24.10, 256 MiB per append and 16 MiB per event on 25.1", async () => {
    const old = new EsdbTestServer({ version: '24.10.0' });
    const current = new EsdbTestServer({ version: '25.1.4' });
    servers.push(await old.start(), await current.start());
    const big = ev('Big', { big: 'x'.repeat(2 * 1024 * 1024) });
    await expect((await open(old.url)).append(stream(), [big])).rejects.toMatchObject({ code: 'append_too_large' });
    await expect((await open(current.url)).append(stream(), [big])).resolves.toMatchObject({
      nextExpectedRevision: 0,
    });
  });
});
