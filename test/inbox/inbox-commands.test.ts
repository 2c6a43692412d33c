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
  WrongExpectedRevisionError,
} from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import type { ChatEvent } from '../../src/inbox/inbox-events.js';
import { outboxReceipts } from '../support/outbox-receipts.js';
import { tempDir } from '../support/temp-dir.js';

/** Counts the appends the store refused for a stale expected revision: a second writer shows up there. */
class ConflictCountingStore extends DelegatingEventStore {
  conflicts = 0;

  override async append(
    streamId: string,
    events: readonly NewEvent[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult> {
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
});
