/**
 * Fenced writes checked by the server (src/eventstore/eventstoredb/append-records.ts): KurrentDB 26.0.3's v2
 * AppendRecords with consistency checks, on the protocol test double ([V2] in test/support/esdb-test-server.ts),
 * against the read-then-write fence that older releases keep.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type EventStore,
  FenceRejectedError,
  StoreRefusedError,
  WrongExpectedRevisionError,
} from '../../../src/eventstore/event-store.js';
import { releaseChecksWrites } from '../../../src/eventstore/eventstoredb/append-records.js';
import { openEventStoreDbStore } from '../../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import { EsdbTestServer } from '../../support/esdb-test-server.js';

const servers: EsdbTestServer[] = [];
const opened: EventStore[] = [];
const start = async (version: string, nodes = 1) => {
  const server = await new EsdbTestServer({ version, nodes }).start();
  servers.push(server);
  return server;
};
const open = async (url: string) => {
  const store = await openEventStoreDbStore(url);
  opened.push(store);
  return store;
};
const stream = () => `fenced-${randomUUID()}`;
const ev = (type: string, data: unknown = {}, metadata?: Record<string, unknown>) => ({ type, data, metadata });

/** Another process takes the lease on the server itself, as the write arrives: after its fence was read. */
function leaseMovesAsTheWriteArrives(server: EsdbTestServer, owned: string, lease: string): void {
  server.beforeWrite = (streamId) => {
    if (streamId !== owned) return;
    server.beforeWrite = undefined;
    server.append(lease, 'any', [
      {
        id: randomUUID(),
        type: 'LeaseAcquired',
        contentType: 'application/json',
        data: Buffer.from(JSON.stringify({ owner: 'b' })),
        metadata: new Uint8Array(),
      },
    ]);
  };
}

afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((store) => store.close()));
  await Promise.allSettled(servers.splice(0).map((server) => server.stop()));
});

describe('fenced writes checked by the server (issue 31)', () => {
  it('knows the releases that check: 26.0.3 and later', () => {
    expect(['26.0.3', '26.0.10', '26.1.0', '27.0.0', '30'].map(releaseChecksWrites)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['26.0.2', '25.1.4', '24.10.0', 'unknown', ''].map(releaseChecksWrites)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('refuses a former owner inside the write on 26.0.3, where the read-then-write fence of 25.1 lets it through', async () => {
    for (const [version, checked] of [
      ['25.1.4', false],
      ['26.0.3', true],
    ] as const) {
      const server = await start(version);
      const store = await open(server.url);
      const [lease, owned] = [stream(), stream()];
      await store.append(lease, [ev('LeaseAcquired', { owner: 'a' })], { expectedRevision: 'no_stream' });
      const fence = { streamId: lease, revision: 0 };
      await store.append(owned, [ev('A')], { expectedRevision: 'no_stream', fence });
      leaseMovesAsTheWriteArrives(server, owned, lease);
      const outcome = await store.append(owned, [ev('B')], { expectedRevision: 0, fence }).catch((e: unknown) => e);
      if (checked) {
        expect(outcome).toBeInstanceOf(FenceRejectedError);
        expect(outcome).toMatchObject({ fence, actual: 1 });
        expect((await store.readStream(owned)).map((e) => e.type)).toEqual(['A']);
        expect(server.calls.appendRecords).toBe(2);
      } else {
        // The window the server cannot close: the fence was read at 0, the lease moved, the write went in.
        expect(outcome).toMatchObject({ nextExpectedRevision: 1 });
        expect((await store.readStream(owned)).map((e) => e.type)).toEqual(['A', 'B']);
        expect(server.calls.appendRecords).toBe(0);
      }
    }
  });

  it("refuses a former owner's snapshot writes inside the write too, and a moved stream is a conflict, the fence first", async () => {
    const server = await start('26.0.3');
    const store = await open(server.url);
    const [lease, owned] = [stream(), stream()];
    await store.append(lease, [ev('LeaseAcquired')], { expectedRevision: 'no_stream' });
    const fence = { streamId: lease, revision: 0 };
    await store.saveSnapshot(owned, { revision: 0, state: { creds: 'a' } }, { fence });
    leaseMovesAsTheWriteArrives(server, `snapshot-${owned}`, lease);
    await expect(store.saveSnapshot(owned, { revision: 1, state: { creds: 'b' } }, { fence })).rejects.toBeInstanceOf(
      FenceRejectedError,
    );
    expect(await store.loadSnapshot(owned)).toEqual({ revision: 0, state: { creds: 'a' } });
    const moved = { streamId: lease, revision: 1 };
    await store.append(owned, [ev('A')], { expectedRevision: 'no_stream', fence: moved });
    const conflict = await store.append(owned, [ev('B')], { expectedRevision: 5, fence: moved }).catch((e) => e);
    expect(conflict).toBeInstanceOf(WrongExpectedRevisionError);
    expect(conflict).toMatchObject({ actual: 0 });
    // Both checks fail: the fence speaks, as the read-then-write fence does.
    const both = await store.append(owned, [ev('B')], { expectedRevision: 5, fence }).catch((e) => e);
    expect(both).toBeInstanceOf(FenceRejectedError);
  });

  it('reads back the metadata it wrote, without the schema the server adds, and maps its size limits to append_too_large', async () => {
    const server = await start('26.0.3');
    const store = await open(server.url);
    const [lease, owned] = [stream(), stream()];
    await store.append(lease, [ev('LeaseAcquired')], { expectedRevision: 'no_stream' });
    const fence = { streamId: lease, revision: 0 };
    const metadata = { schemaVersion: 2, nested: { list: [1, 'two', true, null] } };
    await store.append(owned, [ev('A', { text: 'é', n: 1.5 }, metadata)], { fence });
    const [read] = await store.readStream(owned);
    expect(read).toMatchObject({ type: 'A', data: { text: 'é', n: 1.5 }, metadata, revision: 0 });
    const [fromAll] = (await store.readAll({ from: read.position, maxCount: 1 })).filter((e) => e.streamId === owned);
    expect(fromAll?.position).toBe(read.position);
    server.maxAppendEventSize = 10_000;
    await expect(store.append(owned, [ev('Big', { big: 'x'.repeat(20_000) })], { fence })).rejects.toMatchObject({
      constructor: StoreRefusedError,
      code: 'append_too_large',
    });
    server.maxAppendEventSize = 1_000_000;
    server.maxAppendSize = 30_000;
    const two = [ev('Big', { big: 'x'.repeat(20_000) }), ev('Big', { big: 'x'.repeat(20_000) })];
    await expect(store.append(owned, two, { fence })).rejects.toMatchObject({ code: 'append_too_large' });
    expect((await store.readStream(owned)).map((e) => e.type)).toEqual(['A']);
  });

  it('falls back to the read-then-write fence once a server answers UNIMPLEMENTED, asking it once', async () => {
    const server = await start('26.0.3');
    server.serveAppendRecords = false;
    const store = await open(server.url);
    const [lease, owned] = [stream(), stream()];
    await store.append(lease, [ev('LeaseAcquired')], { expectedRevision: 'no_stream' });
    const fence = { streamId: lease, revision: 0 };
    for (let i = 0; i < 3; i++) await store.append(owned, [ev('A')], { fence });
    await store.append(lease, [ev('LeaseAcquired')], { expectedRevision: 0 });
    await expect(store.append(owned, [ev('B')], { fence })).rejects.toBeInstanceOf(FenceRejectedError);
    expect(server.calls.appendRecords).toBe(1);
    expect(server.calls.features).toBe(1);
  });

  it('follows the leader when a follower refuses AppendRecords, and waits out an election', async () => {
    const server = await start('26.0.3', 3);
    const store = await open(server.url);
    const [lease, owned] = [stream(), stream()];
    await store.append(lease, [ev('LeaseAcquired')], { expectedRevision: 'no_stream' });
    const fence = { streamId: lease, revision: 0 };
    await store.append(owned, [ev('A')], { fence });
    // The leader steps down without dying: the node the client is on now names the new leader.
    server.elect(1);
    const before = server.notLeaderAnswers;
    await store.append(owned, [ev('B')], { expectedRevision: 0, fence });
    expect(server.notLeaderAnswers).toBeGreaterThan(before);
    expect((await store.readStream(owned)).map((e) => e.type)).toEqual(['A', 'B']);
    expect(server.calls.appendRecords).toBeGreaterThanOrEqual(3);
  });
});
