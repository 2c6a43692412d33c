/**
 * One conformance suite for every EventStore adapter (docs/architecture.md, invariant 7).
 * Stores may be shared (an EventStoreDB server), so every test works on streams with a unique prefix
 * and reads $all only after a marker position of its own.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type EventStore,
  FenceRejectedError,
  type StoredEvent,
  WrongExpectedRevisionError,
} from '../../../src/eventstore/event-store.js';
import { eventually } from '../../support/eventually.js';

export interface ConformanceTarget {
  open(): Promise<EventStore>;
}

const ev = (type: string, data: unknown = {}) => ({ type, data });

export function eventStoreConformance(name: string, target: ConformanceTarget) {
  describe(`event store conformance: ${name}`, () => {
    let store: EventStore;
    const prefix = `conf${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    let counter = 0;
    const stream = () => `${prefix}-s${++counter}`;

    /** The position of a fresh marker event: everything this test appends comes after it. */
    const marker = async () => (await store.append(stream(), [ev('Marker')])).position;

    /** Events of this suite's streams after a position, read through readAll pages. */
    async function readMine(after: number, streams: Set<string>): Promise<StoredEvent[]> {
      const mine: StoredEvent[] = [];
      let from = after;
      for (;;) {
        const page = await store.readAll({ after: from, maxCount: 500 });
        if (page.length === 0) return mine;
        for (const e of page) if (streams.has(e.streamId)) mine.push(e);
        from = page[page.length - 1].position;
      }
    }

    beforeAll(async () => {
      store = await target.open();
    });
    afterAll(async () => {
      await store?.close();
    });

    it('answers ping', async () => {
      expect(await store.ping()).toBe(true);
    });

    it('appends to a new stream with no_stream and refuses a second no_stream append', async () => {
      const s = stream();
      const first = await store.append(s, [ev('A'), ev('B')], { expectedRevision: 'no_stream' });
      expect(first.nextExpectedRevision).toBe(1);
      const err = await store.append(s, [ev('C')], { expectedRevision: 'no_stream' }).catch((e) => e);
      expect(err).toBeInstanceOf(WrongExpectedRevisionError);
      expect(err.actual).toBe(1);
      expect(err.streamId).toBe(s);
    });

    it('checks exact revisions, stream_exists and any', async () => {
      const s = stream();
      await expect(store.append(s, [ev('A')], { expectedRevision: 'stream_exists' })).rejects.toBeInstanceOf(
        WrongExpectedRevisionError,
      );
      await expect(store.append(s, [ev('A')], { expectedRevision: 0 })).rejects.toMatchObject({ actual: -1 });
      expect((await store.append(s, [ev('A')], { expectedRevision: 'any' })).nextExpectedRevision).toBe(0);
      expect((await store.append(s, [ev('B')], { expectedRevision: 0 })).nextExpectedRevision).toBe(1);
      await expect(store.append(s, [ev('C')], { expectedRevision: 0 })).rejects.toMatchObject({
        actual: 1,
        expected: 0,
      });
      expect((await store.append(s, [ev('C')], { expectedRevision: 'stream_exists' })).nextExpectedRevision).toBe(2);
      expect((await store.append(s, [ev('D')])).nextExpectedRevision).toBe(3);
      const types = (await store.readStream(s)).map((e) => e.type);
      expect(types).toEqual(['A', 'B', 'C', 'D']);
    });

    it('lets exactly one of several concurrent appends with the same expected revision win', async () => {
      const s = stream();
      await store.append(s, [ev('Created')], { expectedRevision: 'no_stream' });
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.append(s, [ev('Changed', { i })], { expectedRevision: 0 })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(9);
      for (const r of lost) expect(r.reason).toBeInstanceOf(WrongExpectedRevisionError);
      expect(await store.readStream(s)).toHaveLength(2);
    });

    it('reads a stream forwards and backwards from a revision, with a max count', async () => {
      const s = stream();
      await store.append(
        s,
        Array.from({ length: 10 }, (_, i) => ev('N', { i })),
      );
      const all = await store.readStream(s);
      expect(all.map((e) => e.revision)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(all.every((e) => e.streamId === s)).toBe(true);
      const fwd = await store.readStream(s, { fromRevision: 3, maxCount: 4 });
      expect(fwd.map((e) => (e.data as { i: number }).i)).toEqual([3, 4, 5, 6]);
      const back = await store.readStream(s, { direction: 'backwards', maxCount: 3 });
      expect(back.map((e) => e.revision)).toEqual([9, 8, 7]);
      const backFrom = await store.readStream(s, { direction: 'backwards', fromRevision: 4, maxCount: 2 });
      expect(backFrom.map((e) => e.revision)).toEqual([4, 3]);
      expect(await store.readStream(s, { fromRevision: 10 })).toEqual([]);
      expect(await store.readStream(`${prefix}-missing`)).toEqual([]);
    });

    it('round-trips data, metadata, ids and creation time', async () => {
      const s = stream();
      const id = randomUUID();
      const data = { text: 'héllo 👋 \u0000 "quoted"', nested: { list: [1, 2.5, null, true], empty: {} } };
      const before = Date.now();
      await store.append(s, [{ id, type: 'Rich', data, metadata: { correlationId: 'c-1' } }]);
      const [e] = await store.readStream(s);
      expect(e).toMatchObject({ id, type: 'Rich', data, streamId: s, revision: 0 });
      expect(e.metadata).toMatchObject({ correlationId: 'c-1' });
      expect(e.createdAt).toBeInstanceOf(Date);
      expect(e.createdAt.getTime()).toBeGreaterThanOrEqual(before - 5_000);
      expect(e.createdAt.getTime()).toBeLessThanOrEqual(Date.now() + 5_000);
    });

    it('reads all events in append order with strictly increasing positions', async () => {
      const after = await marker();
      const a = stream();
      const b = stream();
      const r1 = await store.append(a, [ev('A1'), ev('A2')]);
      await store.append(b, [ev('B1')]);
      const r3 = await store.append(a, [ev('A3')]);
      const mine = await readMine(after, new Set([a, b]));
      expect(mine.map((e) => e.type)).toEqual(['A1', 'A2', 'B1', 'A3']);
      for (let i = 1; i < mine.length; i++) expect(mine[i].position).toBeGreaterThan(mine[i - 1].position);
      expect(mine[1].position).toBe(r1.position);
      expect(mine[3].position).toBe(r3.position);
      const page = await store.readAll({ after, maxCount: 1 });
      expect(page).toHaveLength(1);
      expect(page[0].position).toBeGreaterThan(after);
      // `from` is inclusive: the event read at a position first.
      const at = await store.readAll({ from: mine[2].position, maxCount: 2 });
      expect(at.map((e) => [e.id, e.position])).toEqual(mine.slice(2, 4).map((e) => [e.id, e.position]));
    });

    it('re-appending the same event ids is idempotent', async () => {
      const s = stream();
      const events = [
        { id: randomUUID(), type: 'X', data: { n: 1 } },
        { id: randomUUID(), type: 'Y', data: { n: 2 } },
      ];
      const first = await store.append(s, events, { expectedRevision: 'no_stream' });
      const again = await store.append(s, events, { expectedRevision: 'no_stream' });
      expect(again.nextExpectedRevision).toBe(first.nextExpectedRevision);
      const anyAgain = await store.append(s, events, { expectedRevision: 'any' });
      expect(anyAgain.nextExpectedRevision).toBe(first.nextExpectedRevision);
      const stored = await store.readStream(s);
      expect(stored.map((e) => e.id)).toEqual(events.map((e) => e.id));
    });

    it('catches up and goes live under concurrent appends with no gap and no duplicate', async () => {
      const after = await marker();
      const streams = [stream(), stream(), stream()];
      const mine = new Set(streams);
      const perStream = 60;
      // Half the history exists before the subscription starts, the rest is written while it runs.
      const write = async (from: number, to: number) => {
        for (let i = from; i < to; i++) {
          await Promise.all(streams.map((s) => store.append(s, [ev('Tick', { i })])));
        }
      };
      await write(0, perStream / 2);
      const subscription = store.subscribe({ after });
      const seen: StoredEvent[] = [];
      const reading = (async () => {
        for await (const batch of subscription) {
          for (const e of batch) if (mine.has(e.streamId)) seen.push(e);
          if (seen.length >= streams.length * perStream) break;
        }
      })();
      await write(perStream / 2, perStream);
      await reading;
      await subscription.close();
      const expected = await readMine(after, mine);
      expect(seen.map((e) => e.id)).toEqual(expected.map((e) => e.id));
      for (const s of streams) {
        const revisions = seen.filter((e) => e.streamId === s).map((e) => e.revision);
        expect(revisions).toEqual(Array.from({ length: perStream }, (_, i) => i));
      }
    });

    it('resumes exactly after a checkpoint', async () => {
      const after = await marker();
      const s = stream();
      await store.append(
        s,
        Array.from({ length: 20 }, (_, i) => ev('N', { i })),
      );
      const first = store.subscribe({ after });
      const taken: StoredEvent[] = [];
      for await (const batch of first) {
        for (const e of batch) if (e.streamId === s) taken.push(e);
        if (taken.length >= 7) break;
      }
      await first.close();
      const checkpoint = taken[6].position;
      const second = store.subscribe({ after: checkpoint });
      const rest: StoredEvent[] = [];
      for await (const batch of second) {
        for (const e of batch) if (e.streamId === s) rest.push(e);
        if (rest.length >= 13) break;
      }
      await second.close();
      expect(rest.map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 13 }, (_, i) => i + 7));
    });

    it('a closed subscription ends its iteration', async () => {
      const s = stream();
      const subscription = store.subscribe({ after: await marker() });
      const received: StoredEvent[] = [];
      const done = (async () => {
        for await (const batch of subscription) for (const e of batch) if (e.streamId === s) received.push(e);
        return 'ended';
      })();
      // Live and waiting: it has delivered an event appended after it started.
      await store.append(s, [ev('Live')]);
      await eventually(() => received.length === 1, 'the live event');
      await subscription.close();
      await expect(done).resolves.toBe('ended');
      expect(received.map((e) => e.type)).toEqual(['Live']);
    });

    it('fails only the append whose data JSON refuses, not the appends beside it (issue 13, defect 11)', async () => {
      const [good1, bad, good2] = await Promise.allSettled([
        store.append(stream(), [ev('Good')]),
        store.append(stream(), [ev('Bad', { n: 1n })]),
        store.append(stream(), [ev('Good')]),
      ]);
      expect(good1.status).toBe('fulfilled');
      expect(good2.status).toBe('fulfilled');
      expect(bad.status).toBe('rejected');
      expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    });

    it('reads -1 as no_stream and refuses other negative expected revisions (issue 13, defect 11)', async () => {
      const s = stream();
      await expect(store.append(s, [ev('A')], { expectedRevision: -2 })).rejects.toBeInstanceOf(RangeError);
      await expect(store.append(s, [ev('A')], { expectedRevision: 0.5 })).rejects.toBeInstanceOf(RangeError);
      expect((await store.append(s, [ev('A')], { expectedRevision: -1 })).nextExpectedRevision).toBe(0);
      await expect(store.append(s, [ev('B')], { expectedRevision: -1 })).rejects.toBeInstanceOf(
        WrongExpectedRevisionError,
      );
    });

    it('recognises a retry by its expected revision after later appends (issue 13, defect 1)', async () => {
      const s = stream();
      await store.append(s, [ev('Created')]);
      const retried = [{ id: randomUUID(), type: 'X', data: {} }];
      const first = await store.append(s, retried, { expectedRevision: 0 });
      await store.append(s, [ev('Later')]);
      const again = await store.append(s, retried, { expectedRevision: 0 });
      expect(again).toEqual(first);
      expect((await store.readStream(s)).map((e) => e.type)).toEqual(['Created', 'X', 'Later']);
    });

    it('takes an event id used in another stream as another event, as EventStoreDB does (issue 13, defect 11)', async () => {
      // Ids are idempotency keys within a stream: KurrentDB's IndexWriter.CheckCommit matches a repeat only
      // against ids committed to the stream appended to.
      const [s1, s2] = [stream(), stream()];
      const event = { id: randomUUID(), type: 'Shared', data: {} };
      const first = await store.append(s1, [event], { expectedRevision: 'no_stream' });
      const second = await store.append(s2, [event], { expectedRevision: 'no_stream' });
      expect(second.position).toBeGreaterThan(first.position);
      expect((await store.readStream(s1)).map((e) => e.id)).toEqual([event.id]);
      expect((await store.readStream(s2)).map((e) => e.id)).toEqual([event.id]);
      // Still a retry within each stream.
      expect(await store.append(s2, [event], { expectedRevision: 'no_stream' })).toEqual(second);
      expect(await store.append(s1, [event], { expectedRevision: 'no_stream' })).toEqual(first);
    });

    it('keeps the latest snapshot of a stream', async () => {
      const s = stream();
      expect(await store.loadSnapshot(s)).toBeNull();
      await store.saveSnapshot(s, { revision: 4, state: { count: 5, name: 'a' } });
      await store.saveSnapshot(s, { revision: 9, state: { count: 10, name: 'b' } });
      expect(await store.loadSnapshot(s)).toEqual({ revision: 9, state: { count: 10, name: 'b' } });
    });

    it('deletes a snapshot, and saves one again after (issue 13, defect 7)', async () => {
      const [s, other, never] = [stream(), stream(), stream()];
      await store.saveSnapshot(s, { revision: 0, state: { secret: 'a' } });
      await store.saveSnapshot(s, { revision: 0, state: { secret: 'b' } });
      await store.saveSnapshot(other, { revision: 0, state: { kept: true } });
      await store.deleteSnapshot(s);
      expect(await store.loadSnapshot(s)).toBeNull();
      expect(await store.loadSnapshot(other)).toEqual({ revision: 0, state: { kept: true } });
      // Deleting what is not there is no error.
      await store.deleteSnapshot(s);
      await store.deleteSnapshot(never);
      await store.saveSnapshot(s, { revision: 1, state: { secret: 'c' } });
      expect(await store.loadSnapshot(s)).toEqual({ revision: 1, state: { secret: 'c' } });
      await store.deleteSnapshot(s);
      expect(await store.loadSnapshot(s)).toBeNull();
    });

    it('writes under a fence only while the fence stream is at the fence revision (issue 14)', async () => {
      const [lease, owned, snap] = [stream(), stream(), stream()];
      await store.append(lease, [ev('LeaseAcquired', { owner: 'a' })], { expectedRevision: 'no_stream' });
      const fence = { streamId: lease, revision: 0 };
      await store.append(owned, [ev('A')], { expectedRevision: 'no_stream', fence });
      await store.saveSnapshot(snap, { revision: 0, state: { creds: 'a' } }, { fence });
      // Another process takes the lease: the former owner's writes are refused, not conflicts to retry.
      await store.append(lease, [ev('LeaseAcquired', { owner: 'b' })], { expectedRevision: 0 });
      const refused = await store.append(owned, [ev('B')], { expectedRevision: 0, fence }).catch((e) => e);
      expect(refused).toBeInstanceOf(FenceRejectedError);
      expect(refused).not.toBeInstanceOf(WrongExpectedRevisionError);
      expect(refused.actual).toBe(1);
      await expect(store.append(owned, [ev('B')], { expectedRevision: 'any', fence })).rejects.toBeInstanceOf(
        FenceRejectedError,
      );
      await expect(
        store.saveSnapshot(snap, { revision: 0, state: { creds: 'stale' } }, { fence }),
      ).rejects.toBeInstanceOf(FenceRejectedError);
      await expect(store.deleteSnapshot(snap, { fence })).rejects.toBeInstanceOf(FenceRejectedError);
      expect((await store.readStream(owned)).map((e) => e.type)).toEqual(['A']);
      expect(await store.loadSnapshot(snap)).toEqual({ revision: 0, state: { creds: 'a' } });
      // The new owner writes under its own fence.
      await store.append(owned, [ev('B')], { expectedRevision: 0, fence: { streamId: lease, revision: 1 } });
      await expect(
        store.append(owned, [ev('C')], { fence: { streamId: stream(), revision: 0 } }),
      ).rejects.toBeInstanceOf(FenceRejectedError);
    });
  });
}
