/**
 * The EventStoreDB adapter under faults, on the protocol test double (test/support/esdb-test-server.ts):
 * what a real server or network does that the happy-path conformance suite never shows.
 */
import { randomUUID } from 'node:crypto';
import { type Server, type Socket, createServer, connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type EventStore,
  StoreRefusedError,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '../../../src/eventstore/event-store.js';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { openEventStore } from '../../../src/eventstore/open-event-store.js';
import { EsdbTestServer, startEsdbTestServer } from '../../support/esdb-test-server.js';
import { eventually } from '../../support/eventually.js';
import { TestClock } from '../../support/test-clock.js';

let server: EsdbTestServer;
const opened: EventStore[] = [];
const open = async (url = server.url, options: Parameters<typeof openEventStoreDbStore>[1] = {}) => {
  const store = await openEventStoreDbStore(url, options);
  opened.push(store);
  return store;
};
const stream = () => `fault-${randomUUID()}`;
const ev = (type: string, data: unknown = {}) => ({ type, data });
/** What the promise did, as a value: a call that never settles ends the test at its timeout. */
const outcomeOf = <T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

beforeAll(async () => {
  server = await startEsdbTestServer();
});
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((store) => store.close()));
  server.appendDelayMs = 0;
});
afterAll(async () => {
  await server.stop();
});

describe('EventStoreDB adapter under faults', () => {
  it('appends without the server-features probe, and reports a broken write path in health (defect 3)', async () => {
    const store = await open();
    // A failed probe once decided the client's append method for good, and every later append failed.
    server.fail('features', 'deadline');
    await expect(store.append(stream(), [ev('A')])).resolves.toMatchObject({ nextExpectedRevision: 0 });
    expect(server.calls.features).toBe(0);
    // Appends that do not get through: reads still work, but health must not be green.
    server.fail('append', 'deadline', 2);
    await expect(store.append(stream(), [ev('A')])).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await store.ping()).toBe(false);
    const s = stream();
    await eventually(
      async () =>
        (await store.append(s, [{ id: randomUUID(), ...ev('B') }], { expectedRevision: 'no_stream' }))
          .nextExpectedRevision === 0,
    );
    expect(await store.ping()).toBe(true);
  });

  it('pings without downloading the newest event of $all (it may be the largest the server takes)', async () => {
    const store = await open();
    await store.append(stream(), [ev('Big', { big: 'x'.repeat(500_000) })]);
    const sent = server.allEventsSent;
    const read = server.calls.read;
    expect(await store.ping()).toBe(true);
    expect(server.calls.read).toBe(read + 1);
    expect(server.allEventsSent).toBe(sent);
    server.fail('read', 'unavailable');
    expect(await store.ping()).toBe(false);
  });

  it("survives another client closing while its appends are in flight (the library's BatchAppend shares one table of answers per process)", async () => {
    const thrown: unknown[] = [];
    const record = (error: unknown) => thrown.push(error);
    process.on('uncaughtException', record);
    process.on('unhandledRejection', record);
    try {
      const busy = await open();
      const other = await open();
      await other.append(stream(), [ev('Warm')]); // the other client has a live append stream
      server.appendDelayMs = 150;
      const received = server.appendRequests.received;
      const appends = Array.from({ length: 5 }, () =>
        busy.append(stream(), [ev('A')], { expectedRevision: 'no_stream' }),
      );
      // On the wire, not answered yet (the server answers them appendDelayMs later).
      await eventually(() => server.appendRequests.received >= received + 5, 'the appends on the wire');
      await other.close();
      const outcomes = await Promise.allSettled(appends);
      // The server's late answers arrive, and the client has read them: a later answer on its stream follows them.
      await eventually(() => server.appendRequests.settled === server.appendRequests.received, 'every answer sent');
      await busy.append(stream(), [ev('After')]);
      expect(thrown).toEqual([]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(5).fill('fulfilled'));
    } finally {
      process.off('uncaughtException', record);
      process.off('unhandledRejection', record);
    }
  });

  it('reports a conflict even when the URL asks the client not to throw (defect 4)', async () => {
    const store = await open(`${server.url}&throwOnAppendFailure=false`);
    const s = stream();
    await store.append(s, [ev('A')], { expectedRevision: 'no_stream' });
    await expect(store.append(s, [ev('B')], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(
      WrongExpectedRevisionError,
    );
    await expect(store.append(s, [ev('B')], { expectedRevision: 5 })).rejects.toMatchObject({ actual: 0 });
    expect(await store.readStream(s)).toHaveLength(1);
  });

  it('gives up on a stalled read after the deadline with StoreUnavailableError (defect 8)', async () => {
    const clock = new TestClock();
    const store = await open(server.url, { operationDeadlineMs: 300, clock });
    for (const read of [() => store.readStream(stream()), () => store.readAll({ maxCount: 10 })]) {
      server.fail('read', 'stall');
      const reads = server.calls.read;
      let outcome: { value?: unknown; error?: unknown } | undefined;
      void outcomeOf<unknown>(read()).then((settled) => (outcome = settled));
      await eventually(() => server.calls.read > reads, 'the read on the wire');
      await clock.advance(299);
      expect(outcome).toBeUndefined();
      await clock.advance(1);
      await eventually(() => outcome, 'the read given up');
      expect(outcome!.error).toBeInstanceOf(StoreUnavailableError);
    }
    expect(await store.readStream(stream())).toEqual([]); // and the next read works
  });

  it('a read still under way on a client it retired fails at its deadline; it is never answered as an empty stream', async () => {
    // Two stalled reads retire the client; two more started just before are still under way on it. Disposed
    // too early, the client ended them as if the stream were empty ([] for events, null for a snapshot).
    const clock = new TestClock({ running: true });
    const store = await open(server.url, { operationDeadlineMs: 6_000, clock });
    const full = stream();
    await store.append(full, [ev('X'), ev('Y')]);
    await store.saveSnapshot(full, { revision: 1, state: { secret: 'k' } });
    server.fail('read', 'stall', 4);
    const reads = server.calls.read;
    const first = [outcomeOf(store.readStream(stream())), outcomeOf(store.readStream(stream()))];
    await eventually(() => server.calls.read >= reads + 2, 'the first reads on the wire');
    await clock.advance(5_500);
    const late = [outcomeOf<unknown>(store.readStream(full)), outcomeOf<unknown>(store.loadSnapshot(full))];
    await eventually(() => server.calls.read >= reads + 4, 'the late reads on the wire');
    // The first reads meet their deadline and retire the client, then the late ones meet theirs.
    await clock.advance(6_000);
    for (const outcome of await Promise.all([...first, ...late]))
      expect(outcome.error).toBeInstanceOf(StoreUnavailableError);
    expect(await store.readStream(full)).toHaveLength(2);
  }, 30_000);

  it('asks for the leader on every call: a follower would serve reads from its lagging copy', async () => {
    const store = await open();
    const before = server.callsNotRequiringLeader;
    const s = stream();
    await store.append('lease-x', [ev('LeaseAcquired')]).catch(() => undefined);
    const [lease] = await store.readStream('lease-x', { direction: 'backwards', maxCount: 1 });
    await store.append(s, [ev('A')], {
      expectedRevision: 'no_stream',
      fence: { streamId: 'lease-x', revision: lease.revision },
    });
    await store.readStream(s);
    await store.readAll({ maxCount: 5 });
    await store.saveSnapshot(s, { revision: 0, state: {} });
    await store.loadSnapshot(s);
    expect(server.callsNotRequiringLeader).toBe(before);
  });

  it('a deleted snapshot reads as gone, its stream keeps $maxCount 1 (older snapshots stay scavengeable), and a later save is read again', async () => {
    const store = await open();
    const s = stream();
    await store.saveSnapshot(s, { revision: 1, state: { secret: 'k' } });
    await store.deleteSnapshot(s);
    expect(await store.loadSnapshot(s)).toBeNull();
    await store.deleteSnapshot(s); // deleted already: nothing more is written
    await store.saveSnapshot(s, { revision: 2, state: { secret: 'l' } });
    expect(await store.loadSnapshot(s)).toEqual({ revision: 2, state: { secret: 'l' } });
    await store.deleteSnapshot(s);
    expect(await store.loadSnapshot(s)).toBeNull();
    // The stream was never soft-deleted (which keeps only $tb in its metadata): $maxCount 1 holds throughout.
    expect(server.metadataOf(`snapshot-${s}`)).toMatchObject({ $maxCount: 1 });
    expect(server.metadataOf(`snapshot-${s}`)).not.toHaveProperty('$tb');
  });

  it('lets in-flight appends finish on close (defect 9)', async () => {
    const store = await open();
    server.appendDelayMs = 300;
    const s = stream();
    const received = server.appendRequests.received;
    const appending = store.append(s, [ev('A')]);
    await eventually(() => server.appendRequests.received > received, 'the append on the wire');
    await store.close();
    await expect(appending).resolves.toMatchObject({ nextExpectedRevision: 0 });
    await expect(store.append(s, [ev('B')])).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('closes its connection on close (defect 9)', async () => {
    const proxy = await tcpProxy(server.port);
    try {
      const store = await open(`esdb://127.0.0.1:${proxy.port}?tls=false`);
      await store.append(stream(), [ev('A')]);
      const subscription = store.subscribe();
      expect(proxy.open()).toBeGreaterThan(0);
      await store.close();
      await subscription.close();
      await eventually(() => proxy.open() === 0, 'the connection to close');
    } finally {
      await proxy.close();
    }
  });

  it('waits for a store that is down at start instead of failing the start (defect 9)', async () => {
    const late = new EsdbTestServer();
    await late.start();
    const port = late.port;
    await late.stop();
    // As the gateway does: read (the projections' catch-up) as soon as the store is open.
    let waits = 0;
    const opening = openEventStore(
      { eventStoreUrl: `esdb://127.0.0.1:${port}?tls=false`, dataDir: '/nonexistent' },
      { startupTimeoutMs: 20_000, log: { warn: () => (waits += 1) } },
    ).then(async (store) => {
      opened.push(store);
      return { store, firstPage: await store.readAll({ maxCount: 1 }) };
    });
    await eventually(() => waits >= 1, 'the opening finding the store down');
    await late.start(port);
    try {
      const { store, firstPage } = await opening;
      expect(firstPage).toEqual([]);
      expect(await store.ping()).toBe(true);
    } finally {
      await late.stop();
    }
  });

  it('fails to open a store that stays down with StoreUnavailableError', async () => {
    const dead = new EsdbTestServer();
    await dead.start();
    const port = dead.port;
    await dead.stop();
    await expect(
      openEventStoreDbStore(`esdb://127.0.0.1:${port}?tls=false`, { startupTimeoutMs: 300 }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('maps access denied, a deleted stream and an oversized append to StoreRefusedError (503, not 500) (defect 10)', async () => {
    const store = await open();
    server.fail('append', 'access_denied');
    await expect(store.append(stream(), [ev('A')])).rejects.toMatchObject({
      name: 'StoreUnavailableError',
      code: 'access_denied',
    });
    server.fail('append', 'stream_deleted');
    await expect(store.append(stream(), [ev('A')])).rejects.toMatchObject({ code: 'stream_deleted' });
    const big = 'x'.repeat(1_100_000);
    const error = await store.append(stream(), [ev('Big', { big })]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreRefusedError);
    expect(error).toMatchObject({ code: 'append_too_large' });
  });

  it("maps one event over the server's MaxAppendEventSize (KurrentDB 25.0+) to StoreRefusedError too, and keeps no such snapshot", async () => {
    const store = await open();
    server.maxAppendEventSize = 50_000;
    try {
      const s = stream();
      const error = await store
        .append(s, [ev('Small'), ev('Big', { big: 'x'.repeat(60_000) })])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreRefusedError);
      expect(error).toMatchObject({ code: 'append_too_large', message: expect.stringContaining('50000 bytes') });
      expect(await store.readStream(s)).toEqual([]);
      await store.saveSnapshot(s, { revision: 1, state: { small: true } });
      await store.saveSnapshot(s, { revision: 2, state: { big: 'x'.repeat(60_000) } });
      expect(await store.loadSnapshot(s)).toEqual({ revision: 1, state: { small: true } });
    } finally {
      server.maxAppendEventSize = Number.POSITIVE_INFINITY; // 24.10, the release the server plays
    }
  });

  it('does not keep a snapshot over the append limit, and loading falls back to the previous one (defect 10)', async () => {
    const store = await open();
    const s = stream();
    await store.saveSnapshot(s, { revision: 3, state: { small: true } });
    await store.saveSnapshot(s, { revision: 9, state: { big: 'x'.repeat(1_100_000) } });
    expect(await store.loadSnapshot(s)).toEqual({ revision: 3, state: { small: true } });
  });

  it('ends a dropped subscription with StoreUnavailableError, and a new one resumes after its last event', async () => {
    const store = await open();
    const s = stream();
    const marker = await store.append(stream(), [ev('Marker')]);
    const subscription = store.subscribe({ after: marker.position });
    const seen: number[] = [];
    const reading = (async () => {
      for await (const batch of subscription) for (const e of batch) if (e.streamId === s) seen.push(e.position);
    })();
    await store.append(s, [ev('A')]);
    await eventually(() => seen.length === 1);
    expect(server.dropSubscriptions()).toBeGreaterThan(0);
    await expect(reading).rejects.toBeInstanceOf(StoreUnavailableError);
    await store.append(s, [ev('B')]);
    const again = store.subscribe({ after: seen[0] });
    for await (const batch of again) {
      expect(batch.filter((e) => e.streamId === s).map((e) => e.type)).toEqual(['B']);
      break;
    }
  });

  it('keeps working across a server restart', async () => {
    const store = await open();
    const s = stream();
    await store.append(s, [ev('A')]);
    await server.restart();
    // A retry of the same events with the same expected revision: safe whatever the first try did.
    const b = { id: randomUUID(), ...ev('B') };
    await eventually(async () => (await store.append(s, [b], { expectedRevision: 0 })).nextExpectedRevision === 1);
    expect((await store.readStream(s)).map((e) => e.type)).toEqual(['A', 'B']);
  });

  it('recognises a retry pinned by its expected revision across a restart; an `any` retry is not (server semantics)', async () => {
    const store = await open();
    const s = stream();
    const pinned = [{ id: randomUUID(), type: 'Pinned', data: {} }];
    const loose = [{ id: randomUUID(), type: 'Loose', data: {} }];
    await store.append(s, pinned, { expectedRevision: 'no_stream' });
    await store.append(s, loose, { expectedRevision: 'any' });
    await server.restart();
    await eventually(
      async () => (await store.append(s, pinned, { expectedRevision: 'no_stream' })).nextExpectedRevision === 0,
    );
    // The idempotency cache of `any` appends died with the node: the same id is written a second time.
    expect((await store.append(s, loose, { expectedRevision: 'any' })).nextExpectedRevision).toBe(2);
    expect((await store.readStream(s)).map((e) => e.type)).toEqual(['Pinned', 'Loose', 'Loose']);
  });
});

/** A TCP relay that counts the connections open through it. */
async function tcpProxy(target: number): Promise<{ port: number; open(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const relay: Server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    sockets.add(client);
    client.pipe(upstream).pipe(client);
    const done = () => {
      sockets.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', done).on('error', done);
    upstream.on('close', done).on('error', done);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    port: (relay.address() as { port: number }).port,
    open: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}
