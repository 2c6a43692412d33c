/**
 * Receipts through the outbox (src/outbox/commands/outbox-receipts.ts): the message sink hands them to the
 * outbox's writer, the one writer of `outbox-<deviceId>`, and they enter the message's life as the message
 * index shows it: a message the network refused after it was sent ends `failed`, its error in the status history.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreMessageSink } from '../../../src/actors/message-sink.js';
import { MessageIndex } from '../../../src/chats/message-index.js';
import { OutboxReceipts } from '../../../src/outbox/commands/outbox-receipts.js';
import { ProjectionRunner } from '../../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../../src/projections/read-model-db.js';
import { DelegatingEventStore } from '../../../src/eventstore/delegating-store.js';
import type { AppendOptions, AppendResult, NewEvent } from '../../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { outboxStream } from '../../../src/messages/message-events.js';
import { Outboxes } from '../../../src/outbox/stream/outboxes.js';
import { eventually } from '../../support/eventually.js';
import { tempDir } from '../../support/temp-dir.js';
import { FakeConnection, type Harness, outboxHarness, text } from '../support/harness.js';

const DEVICE = 'shop-1';
const PEER = '4915112345678';

describe('receipts through the outbox', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a refusal after the message was sent and delivered fails it, with the error in its status history', async () => {
    h = await outboxHarness();
    const { waMessageId } = await h.queue(DEVICE, text('hi'), PEER);
    h.connections.online(DEVICE, new FakeConnection());
    h.drainer.start([DEVICE]);
    await eventually(async () => (await h!.statuses(DEVICE)).some((s) => s.status === 'sent'), 'sent');

    const receipts = new StoreMessageSink(h.store, new OutboxReceipts(h.outboxes, { byWaMessageId: () => undefined }));
    const error = { code: 'refused_by_network', message: 'WhatsApp refused the message after it was sent (error 463)' };
    await receipts.receipt(DEVICE, { waMessageId, status: 'delivered', recipient: PEER, timestamp: 1_700_000_001 });
    await receipts.receipt(DEVICE, { waMessageId, status: 'failed', recipient: PEER, timestamp: 1_700_000_002, error });
    // A late receipt after the failure adds nothing: the outbox does not record it.
    await receipts.receipt(DEVICE, { waMessageId, status: 'read', recipient: PEER, timestamp: 1_700_000_003 });

    const db = openReadModelDb(h.dir);
    const index = new MessageIndex(db);
    const runner = new ProjectionRunner(h.store, db, [index], pino({ level: 'silent' }));
    try {
      await runner.start();
      const message = index.message(DEVICE, waMessageId)!;
      expect(message.status).toBe('failed');
      expect(message.statusHistory!.map((entry) => [entry.status, entry.error])).toEqual([
        ['queued', undefined],
        ['sent', undefined],
        ['delivered', undefined],
        ['failed', error],
      ]);
    } finally {
      await runner.stop();
      db.close();
    }
  });

  it("the message sink's receipts are decided by the outbox and appended with its expected revision, never beside it", async () => {
    /** Notes the expected revision of every append to an outbox stream. */
    class Recording extends DelegatingEventStore {
      readonly outboxAppends: Array<AppendOptions['expectedRevision']> = [];
      override append(streamId: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
        if (streamId.startsWith('outbox-')) this.outboxAppends.push(options?.expectedRevision);
        return super.append(streamId, events, options);
      }
    }
    const sqlite = new SqliteEventStore(join(tempDir('dmg-receipts-'), 'events.sqlite'));
    const store = new Recording(sqlite);
    try {
      const outboxes = new Outboxes(store, pino({ level: 'silent' }));
      const queued = await outboxes.execute(DEVICE, {
        type: 'QueueMessage',
        deviceId: DEVICE,
        message: {
          outboxId: 'o-1',
          waMessageId: '3EB0RECEIPT',
          to: PEER,
          content: { kind: 'text', text: 'hi' },
          createdAt: new Date().toISOString(),
        },
      });
      expect(queued.result.kind).toBe('queued');
      const sink = new StoreMessageSink(store, new OutboxReceipts(outboxes, { byWaMessageId: () => undefined }));
      const receipt = { waMessageId: '3EB0RECEIPT', status: 'delivered' as const, recipient: PEER, timestamp: 1 };
      await sink.receipt(DEVICE, receipt);
      await sink.receipt(DEVICE, receipt);

      // Every append to the stream names the revision it expects: the outbox is its one writer.
      expect(store.outboxAppends).toEqual(['no_stream', 0]);
      const events = await sqlite.readStream(outboxStream(DEVICE));
      expect(events.map((e) => e.type)).toEqual(['OutboxMessageQueued', 'MessageStatusChanged']);
      // Decided on the outbox's state: the receipt carries the outboxId of the message it confirms.
      expect(events[1].data).toMatchObject({ waMessageId: '3EB0RECEIPT', status: 'delivered', outboxId: 'o-1' });
      expect((await outboxes.get(DEVICE)).current.byWaMessageId('3EB0RECEIPT')?.confirmed).toBe(true);
    } finally {
      await sqlite.close();
    }
  });
});
