/**
 * The webhook deliveries read model (src/webhooks/webhooks-read-model.ts), fed events directly: what a
 * removed hook leaves behind.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { WebhooksReadModel } from '../../src/webhooks/webhooks-read-model.js';

describe('webhook deliveries read model', () => {
  it('keeps a delivery cancelled by a removed hook failed when an attempt in flight is recorded later', () => {
    const db = new Database(':memory:');
    const model = new WebhooksReadModel(db);
    model.setup(db);
    let position = 0;
    const apply = (type: string, data: Record<string, unknown>) => {
      const event: StoredEvent = { id: `e${++position}`, streamId: 'device-d1', revision: position - 1, position, type, data, metadata: {}, createdAt: new Date() };
      model.apply(event);
      return event;
    };
    const now = () => new Date().toISOString();
    apply('HooksConfigured', { deviceId: 'd1', url: 'https://old.example/hook', events: ['*'], secret: 'whsec_AAAA', at: now() });
    const message = apply('MessageReceived', { deviceId: 'd1', from: '4915100000001', type: 'text', body: 'private', timestamp: 1, waMessageId: 'W1' });
    expect(model.pendingHeads('d1', 10).map((d) => d.id)).toEqual([message.id]);
    // Removed while an attempt is under way; the attempt ends later and asks for a retry.
    apply('HooksRemoved', { deviceId: 'd1' });
    apply('WebhookDeliveryAttempted', {
      deviceId: 'd1',
      deliveryId: message.id,
      round: 0,
      attempt: 1,
      outcome: 'retrying',
      status: 500,
      durationMs: 1,
      attemptedAt: now(),
      nextAttemptAt: now(),
    });
    expect(model.delivery('d1', message.id)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(model.devicesWithPending()).toEqual([]);
    // A hook configured later gets nothing of the old one's deliveries.
    apply('HooksConfigured', { deviceId: 'd1', url: 'https://new.example/hook', events: ['session.state'], secret: 'whsec_BBBB', at: now() });
    expect(model.pendingHeads('d1', 10)).toEqual([]);
    db.close();
  });
});
