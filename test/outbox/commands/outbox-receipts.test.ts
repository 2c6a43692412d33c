/**
 * Receipts through the outbox (src/outbox/commands/outbox-receipts.ts) into the message's life as the message index
 * shows it: a message the network refused after it was sent ends `failed`, its error in the status history.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreMessageSink } from '../../../src/actors/message-sink.js';
import { MessageIndex } from '../../../src/chats/message-index.js';
import { OutboxReceipts } from '../../../src/outbox/commands/outbox-receipts.js';
import { ProjectionRunner } from '../../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../../src/projections/read-model-db.js';
import { eventually } from '../../support/eventually.js';
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

    const receipts = new OutboxReceipts(new StoreMessageSink(h.store), h.outboxes, { byWaMessageId: () => undefined });
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
});
