import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type AppendOptions, type NewEvent, WrongExpectedRevisionError } from '../../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import { DeviceOutbox } from '../../../src/outbox/stream/device-outbox.js';
import type { Receipt } from '../../../src/engines/engine.js';
import type { NewMessage, SentRecord } from '../../../src/outbox/stream/outbox-decider.js';
import { DelegatingEventStore } from '../../../src/eventstore/delegating-store.js';
import type { OutboxSnapshotState } from '../../../src/outbox/stream/outbox-state.js';
import { eventually } from '../../support/eventually.js';
import { tempDir } from '../../support/temp-dir.js';

const DEVICE = 'shop-1';
const message = (n: number) => ({
  outboxId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  waMessageId: `3EB0${String(n).padStart(18, '0')}`,
  to: '4915112345678',
  content: { kind: 'text' as const, text: `m${n}` },
  createdAt: new Date().toISOString(),
});

const queue = (m: NewMessage) => ({ type: 'QueueMessage', deviceId: DEVICE, message: m }) as const;
const cancel = (outboxId: string) => ({ type: 'CancelMessage', deviceId: DEVICE, outboxId, now: Date.now() }) as const;
const clear = () => ({ type: 'ClearOutbox', deviceId: DEVICE, now: Date.now() }) as const;
/** `sent`: the outbox read model's record of the message (null: none). */
const recordReceipt = (receipt: Receipt, sent: SentRecord | null = null) =>
  ({ type: 'RecordReceipt', deviceId: DEVICE, receipt, sent }) as const;
const seqOf = (executed: { result: { kind: string; message?: { seq: number } } }) => executed.result.message?.seq;

describe('a device outbox (the one writer of its stream)', () => {
  let store: SqliteEventStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });
  const open = () => (store = new SqliteEventStore(join(tempDir('dmg-outbox-'), 'events.sqlite')));

  it('pipelines concurrent commands with chained expected revisions, decided and stored in FIFO order', async () => {
    const s = open();
    const outbox = await DeviceOutbox.load(s, DEVICE);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => outbox.execute(queue(message(i)))));
    expect(results.map((r) => seqOf(r))).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const events = await s.readStream(outboxStream(DEVICE));
    expect(events).toHaveLength(50);
    expect(events.map((e) => (e.data as { outboxId: string }).outboxId)).toEqual(
      Array.from({ length: 50 }, (_, i) => message(i).outboxId),
    );
    expect(events.map((e) => e.revision)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(results.map((r) => r.position)).toEqual(events.map((e) => e.position));
    expect([...outbox.current.messages.keys()]).toEqual(Array.from({ length: 50 }, (_, i) => message(i).outboxId));
  });

  it('decides again after a receipt appended by another writer got in between', async () => {
    const s = open();
    const outbox = await DeviceOutbox.load(s, DEVICE);
    await outbox.execute(queue(message(1)));
    // Another writer (another process) records a receipt.
    await s.append(outboxStream(DEVICE), [
      {
        type: 'MessageStatusChanged',
        data: {
          deviceId: DEVICE,
          waMessageId: message(1).waMessageId,
          status: 'delivered',
          recipient: '4915112345678',
          timestamp: 1,
        },
      },
    ]);
    await outbox.execute(queue(message(2)));
    const events = await s.readStream(outboxStream(DEVICE));
    expect(events.map((e) => e.type)).toEqual(['OutboxMessageQueued', 'MessageStatusChanged', 'OutboxMessageQueued']);
    expect(outbox.current.byWaMessageId(message(1).waMessageId)?.confirmed).toBe(true);
  });

  it('records receipts once, with the outboxId, and drops repeats and outdated ones', async () => {
    const s = open();
    const outbox = await DeviceOutbox.load(s, DEVICE);
    await outbox.execute(queue(message(1)));
    const receipt = (status: 'delivered' | 'read', n = 1) => ({
      waMessageId: message(n).waMessageId,
      status,
      recipient: '4915112345678',
      timestamp: 5,
    });
    await outbox.execute(recordReceipt(receipt('delivered')));
    await outbox.execute(recordReceipt(receipt('delivered')));
    // A message that left the outbox long ago: what the read model knows decides.
    const old = await outbox.execute(
      recordReceipt(receipt('delivered', 9), { outboxId: message(9).outboxId, to: '4915112345678', status: 'read' }),
    );
    expect(old.result).toEqual({ kind: 'repeat' });
    const fresh = await outbox.execute(
      recordReceipt(receipt('read', 8), { outboxId: message(8).outboxId, to: '4915112345678', status: 'sent' }),
    );
    expect(fresh.result).toEqual({ kind: 'recorded' });
    const statuses = (await s.readStream(outboxStream(DEVICE)))
      .filter((e) => e.type === 'MessageStatusChanged')
      .map((e) => e.data);
    expect(statuses).toEqual([
      {
        deviceId: DEVICE,
        waMessageId: message(1).waMessageId,
        status: 'delivered',
        recipient: '4915112345678',
        outboxId: message(1).outboxId,
        timestamp: 5,
      },
      {
        deviceId: DEVICE,
        waMessageId: message(8).waMessageId,
        status: 'read',
        recipient: '4915112345678',
        outboxId: message(8).outboxId,
        timestamp: 5,
      },
    ]);
    // A reloaded outbox (new process) still drops a repeat: the store holds the event under the same id.
    const again = await DeviceOutbox.load(s, DEVICE);
    await again.execute(recordReceipt(receipt('delivered')));
    expect((await s.readStream(outboxStream(DEVICE))).filter((e) => e.type === 'MessageStatusChanged')).toHaveLength(2);
    await again.execute(queue(message(2)));
    expect((await s.readStream(outboxStream(DEVICE))).at(-1)!.type).toBe('OutboxMessageQueued');
  });

  it('reloads and decides again when another writer got in the way', async () => {
    const s = open();
    const outbox = await DeviceOutbox.load(s, DEVICE);
    await outbox.execute(queue(message(1)));
    await outbox.execute(queue(message(2)));
    // A second writer (say another process) cancels message 1 behind this one's back.
    const other = await DeviceOutbox.load(s, DEVICE);
    await other.execute(cancel(message(1).outboxId));
    const cleared = await outbox.execute(clear());
    // Decided on the reloaded state: only message 2 was still queued.
    expect(cleared.result.map((m) => m.outboxId)).toEqual([message(2).outboxId]);
    const cancellations = (await s.readStream(outboxStream(DEVICE))).filter((e) => e.type === 'MessageStatusChanged');
    expect(cancellations.map((e) => (e.data as { outboxId: string }).outboxId)).toEqual([
      message(1).outboxId,
      message(2).outboxId,
    ]);
  });

  it('refuses through the store what two writers decide at once: one wins, the other re-decides', async () => {
    const s = open();
    const a = await DeviceOutbox.load(s, DEVICE);
    const b = await DeviceOutbox.load(s, DEVICE);
    await a.execute(queue(message(1)));
    // b's state is behind: its append at the old revision is rejected by the store, then retried after a reload.
    const appended = await b.execute(queue(message(2)));
    expect(seqOf(appended)).toBe(2);
    const seqs = (await s.readStream(outboxStream(DEVICE))).map((e) => (e.data as { seq: number }).seq);
    expect(seqs).toEqual([1, 2]);
    await expect(
      s.append(outboxStream(DEVICE), [{ type: 'X', data: {} }], { expectedRevision: 0 }),
    ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
  });

  it('rehydrates from its latest snapshot and the events after it', async () => {
    const s = open();
    const outbox = await DeviceOutbox.load(s, DEVICE, { snapshotEvery: 10 });
    for (let i = 0; i < 25; i++) await outbox.execute(queue(message(i)));
    await outbox.execute(clear());
    for (let i = 25; i < 28; i++) await outbox.execute(queue(message(i)));
    // 25 queued (revisions 0..24), the clear (25 events, up to 49), 3 queued (50..52). Snapshots
    // are saved in the background; the last one is taken after the clear (the three after it are too few).
    await eventually(
      async () => (await s.loadSnapshot<OutboxSnapshotState>(outboxStream(DEVICE)))?.revision === 49,
      'the snapshot after the clear',
    );
    let read = 0;
    const counting = Object.create(s) as SqliteEventStore;
    counting.readStream = async (stream, options) => {
      const events = await s.readStream(stream, options);
      read += events.length;
      return events;
    };
    const again = await DeviceOutbox.load(counting, DEVICE);
    expect(read).toBe(3);
    expect([...again.current.messages.keys()]).toEqual([
      message(25).outboxId,
      message(26).outboxId,
      message(27).outboxId,
    ]);
    expect(again.current.lastSeq).toBe(28);
  });
});

describe('several writers of one outbox stream (several processes on one file)', () => {
  const stores: SqliteEventStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('queues every one of many concurrent sends through three writers on one file: conflicts are decided again, none refused', async () => {
    const file = join(tempDir('dmg-outbox-writers-'), 'events.sqlite');
    // Three connections to one file, each with its own outbox of the device: three processes, as far as the store sees.
    stores.push(...[0, 1, 2].map(() => new SqliteEventStore(file, { sharedFile: true })));
    const writers = await Promise.all(stores.map((s) => DeviceOutbox.load(s, DEVICE, { pipeline: false })));
    const PER_WRITER = 150;
    const IN_FLIGHT = 15;
    const refused: unknown[] = [];
    // Each writer keeps IN_FLIGHT sends under way until it queued its share: the stream keeps moving under every one.
    await Promise.all(
      writers.map(async (outbox, w) => {
        let next = 0;
        const lane = async () => {
          while (next < PER_WRITER) {
            const n = w * PER_WRITER + next++;
            await outbox.execute(queue(message(n))).catch((error: unknown) => refused.push(error));
          }
        };
        await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      }),
    );
    expect(refused).toEqual([]);
    const queued = (await stores[0].readStream(outboxStream(DEVICE))).filter((e) => e.type === 'OutboxMessageQueued');
    expect(queued).toHaveLength(3 * PER_WRITER);
    expect(new Set(queued.map((e) => (e.data as { outboxId: string }).outboxId)).size).toBe(3 * PER_WRITER);
    expect(queued.map((e) => (e.data as { seq: number }).seq)).toEqual(
      Array.from({ length: 3 * PER_WRITER }, (_, i) => i + 1),
    );
  }, 60_000);

  it('never appends a decision that rested on a refused append, when another writer filled its revision', async () => {
    const file = join(tempDir('dmg-outbox-writers-'), 'events.sqlite');
    stores.push(new SqliteEventStore(file, { sharedFile: true }), new SqliteEventStore(file, { sharedFile: true }));
    const [a, b] = await Promise.all(stores.map((s) => DeviceOutbox.load(s, DEVICE, { pipeline: false })));
    // b's append is committed first and takes revision 0, which a's first append expects; a's second one, decided
    // on the state with a's first (message 2 queued), expects revision 1: pipelined, it would go in before it.
    const fromB = b.execute(queue(message(1)));
    const queued = a.execute(queue(message(2)));
    const cancelled = a.execute(cancel(message(2).outboxId));
    await Promise.all([fromB, queued, cancelled]);
    const events = (await stores[0].readStream(outboxStream(DEVICE))).map(
      (e) => `${e.type} ${(e.data as { outboxId: string }).outboxId}`,
    );
    expect(events).toEqual([
      `OutboxMessageQueued ${message(1).outboxId}`,
      `OutboxMessageQueued ${message(2).outboxId}`,
      `MessageStatusChanged ${message(2).outboxId}`,
    ]);
  });

  it('decides again inside the append when another writer got in first: nothing is refused, and the answers are those of the state decided on (issue 14)', async () => {
    const file = join(tempDir('dmg-outbox-writers-'), 'events.sqlite');
    stores.push(new SqliteEventStore(file, { sharedFile: true }), new SqliteEventStore(file, { sharedFile: true }));
    const conflicts: unknown[] = [];
    const counting = new (class extends DelegatingEventStore {
      override append(streamId: string, events: readonly NewEvent[], options?: AppendOptions) {
        return super.append(streamId, events, options).catch((error: unknown) => {
          conflicts.push(error);
          throw error;
        });
      }
    })(stores[0]);
    const [a, b] = [
      await DeviceOutbox.load(counting, DEVICE, { pipeline: false }),
      await DeviceOutbox.load(stores[1], DEVICE, { pipeline: false }),
    ];
    await b.execute(queue(message(1)));
    // a has not read b's message: its three sends are decided again after it, in one append.
    const answers = await Promise.all([2, 3, 4].map((n) => a.execute(queue(message(n)))));
    expect(conflicts).toEqual([]);
    expect(answers.map((answer) => seqOf(answer))).toEqual([2, 3, 4]);
    const stored = await stores[0].readStream(outboxStream(DEVICE));
    expect(stored.map((e) => (e.data as { seq: number }).seq)).toEqual([1, 2, 3, 4]);
    expect(a.current.messages.size).toBe(4);
    // A repeated Idempotency-Key another writer queued meanwhile is recognised inside the append too.
    const keyed = (n: number) => ({ ...message(n), idempotency: { key: 'k', fingerprint: 'f' } });
    await b.execute(queue(keyed(5)));
    expect((await a.execute(queue(keyed(6)))).result).toEqual({
      kind: 'repeated',
      answer: expect.objectContaining({ outboxId: keyed(5).outboxId }),
    });
    expect(conflicts).toEqual([]);
    expect((await stores[0].readStream(outboxStream(DEVICE))).length).toBe(5);
  });
});
