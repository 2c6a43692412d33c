/** The device actors' default message sink: where it records what the engine reports besides the inbox's part. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreMessageSink } from '../../src/actors/message-sink.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { outboxReceipts } from '../support/outbox-receipts.js';
import { tempDir } from '../support/temp-dir.js';

describe('the message sink', () => {
  it('records a failed receipt (the network refused the message after the send) with its error', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-sink-'), 'events.sqlite'));
    try {
      const error = {
        code: 'refused_by_network',
        message: 'WhatsApp refused the message after it was sent (error 463)',
      };
      await new StoreMessageSink(store, outboxReceipts(store)).receipt('dev', {
        waMessageId: 'W1',
        status: 'failed',
        recipient: '4915111111111',
        timestamp: 5,
        error,
      });
      const [event] = await store.readStream('outbox-dev');
      expect(event).toMatchObject({
        type: 'MessageStatusChanged',
        data: { deviceId: 'dev', waMessageId: 'W1', status: 'failed', recipient: '4915111111111', timestamp: 5, error },
      });
    } finally {
      await store.close();
    }
  });
});
