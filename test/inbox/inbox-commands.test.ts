/** The inbox stream's one writer: what the engine reports and what the gateway records itself share it. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreMessageSink } from '../../src/actors/message-sink.js';
import { InboxCommands } from '../../src/inbox/inbox-commands.js';
import { DelegatingEventStore } from '../../src/eventstore/delegating-store.js';
import {
  type AppendResult,
  type ExpectedRevision,
  type NewEvent,
  type Snapshot,
  WrongExpectedRevisionError,
} from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import type { ChatEvent, HistoryChunk } from '../../src/inbox/inbox-events.js';
import { eventually } from '../support/eventually.js';
import { outboxReceipts } from '../support/outbox-receipts.js';
import { tempDir } from '../support/temp-dir.js';

/** Counts the appends the store refused for a stale expected revision: a second writer shows up there. */
class ConflictCountingStore extends DelegatingEventStore {
  conflicts = 0;
  /** The appends made (each one flush to disk on the SQLite store). */
  appends = 0;

  override async append(
    streamId: string,
    events: readonly NewEvent[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult> {
    this.appends += 1;
    try {
      return await super.append(streamId, events, options);
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) this.conflicts += 1;
      throw error;
    }
  }
}

const inbound = (waMessageId: string) => ({
  waMessageId,
  from: '4915111111111',
  type: 'text' as const,
  body: 'hi',
  timestamp: 1_700_000_000,
});

describe('the inbox writer', () => {
  it('records read receipts and late media between inbound messages without a conflict, and a repeat once', async () => {
    const inner = new SqliteEventStore(join(tempDir('dmg-sink-'), 'events.sqlite'));
    const store = new ConflictCountingStore(inner);
    const inbox = new InboxCommands(store);
    // The device actors' sink and the gateway's own records (ChatCommands, late media) share the writer.
    const sink = new StoreMessageSink(store, outboxReceipts(store), undefined, inbox);
    try {
      await sink.received('dev', inbound('A1'));
      const read: ChatEvent = {
        type: 'ChatRead',
        data: {
          deviceId: 'dev',
          chatId: '4915111111111@s.whatsapp.net',
          waMessageIds: ['A1'],
          timestamp: 1_700_000_001,
        },
      };
      const position = await inbox.record('dev', read, '00000000-0000-5000-8000-000000000001');
      expect(position).toBeGreaterThan(0);
      const media: ChatEvent = {
        type: 'InboundMediaUpdated',
        data: { deviceId: 'dev', waMessageId: 'A1', media: { mimetype: 'image/jpeg', status: 'failed' } },
      };
      await inbox.record('dev', media, '00000000-0000-5000-8000-000000000002');
      await sink.received('dev', inbound('A2'));
      // The same read receipt decided again (a retried request) appends nothing.
      await inbox.record('dev', { ...read }, '00000000-0000-5000-8000-000000000001');

      const types = (await inner.readStream('inbox-dev')).map((e) => e.type);
      expect(types).toEqual(['MessageReceived', 'ChatRead', 'InboundMediaUpdated', 'MessageReceived']);
      // Every append was made at the revision the writer held: nobody wrote beside it.
      expect(store.conflicts).toBe(0);
    } finally {
      await inner.close();
    }
  });

  it('records a history chunk in one append, its ids side by side in the id order, and a chunk sent again not at all', async () => {
    const inner = new SqliteEventStore(join(tempDir('dmg-history-'), 'events.sqlite'));
    const store = new ConflictCountingStore(inner);
    const inbox = new InboxCommands(store);
    const chunk = (syncId: string, count: number): HistoryChunk => ({
      syncId,
      chats: [{ chatId: '4915111111111', name: 'Ann' }],
      // Newest first: recorded oldest first.
      messages: Array.from({ length: count }, (_, i) => ({
        ...inbound(`${syncId}-${i}`),
        timestamp: 1_700_000_000 - i,
      })),
      progress: 50,
      final: false,
    });
    try {
      await inbox.history('dev', chunk('s1', 300));
      await inbox.history('dev', chunk('s2', 300));
      // Each chunk one append (its history.synced with its messages): one flush to disk each.
      expect(store.appends).toBe(2);
      const events = await inner.readStream('inbox-dev');
      expect(events.map((e) => e.type)).toEqual([
        ...Array<string>(300).fill('HistoryImported'),
        'HistorySynced',
        ...Array<string>(300).fill('HistoryImported'),
        'HistorySynced',
      ]);
      expect(events.slice(0, 3).map((e) => (e.data as { waMessageId: string }).waMessageId)).toEqual([
        's1-299',
        's1-298',
        's1-297',
      ]);
      // The store's id index gets each chunk's ids in one place: sorted, no id of the other chunk falls among them.
      const chunkOf = new Map(events.map((e, i) => [e.id, i <= 300 ? 's1' : 's2']));
      const inIdOrder = [...chunkOf.keys()].sort().map((id) => chunkOf.get(id));
      const runs = inIdOrder.filter((c, i) => c !== inIdOrder[i - 1]).length;
      expect(runs).toBe(2);

      await inbox.history('dev', chunk('s1', 300));
      expect((await inner.readStream('inbox-dev')).length).toBe(602);
      expect(store.conflicts).toBe(0);
    } finally {
      await inner.close();
    }
  });

  it('answers a history chunk once it is durable, without waiting for the inbox snapshot it makes', async () => {
    const inner = new SqliteEventStore(join(tempDir('dmg-history-'), 'events.sqlite'));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const snapshots: number[] = [];
    /** Holds every snapshot until the test lets it go. */
    class HeldSnapshots extends DelegatingEventStore {
      override async saveSnapshot(streamId: string, snapshot: Snapshot): Promise<void> {
        snapshots.push(snapshot.revision);
        await gate;
        await super.saveSnapshot(streamId, snapshot);
      }
    }
    const inbox = new InboxCommands(new HeldSnapshots(inner));
    try {
      await inbox.history('dev', {
        syncId: 's1',
        chats: [],
        messages: Array.from({ length: 300 }, (_, i) => inbound(`s1-${i}`)),
        final: true,
      });
      // Answered with its snapshot still held: the chunk's events are all there.
      expect(snapshots).toEqual([300]);
      expect((await inner.readStream('inbox-dev')).length).toBe(301);
      release();
      await eventually(async () => (await inner.loadSnapshot('inbox-dev'))?.revision === 300, 'the snapshot');
    } finally {
      release();
      await inner.close();
    }
  });
});
