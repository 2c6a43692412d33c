import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { type WebhookDeliveryAttemptedData, webhooksStream } from '../../src/webhooks/delivery-events.js';
import { deliveryLaneDecider } from '../../src/webhooks/delivery-lane-decider.js';
import { LANE_SNAPSHOT_EVERY, createDeliveryLaneCommands } from '../../src/webhooks/webhooks.js';
import { deciderSpecification } from '../support/decider-specification.js';
import { tempDir } from '../support/temp-dir.js';

const spec = deciderSpecification(deliveryLaneDecider);
const attempt = (deliveryId: string, n: number): WebhookDeliveryAttemptedData => ({
  deviceId: 'd',
  deliveryId,
  round: 0,
  attempt: n,
  outcome: 'retrying',
  status: 500,
  durationMs: 3,
  attemptedAt: '2026-11-22T12:00:00.000Z',
  nextAttemptAt: '2026-11-22T12:00:05.000Z',
});

describe('the delivery lane decider', () => {
  it('records an attempt', () =>
    spec
      .given([])
      .when({ type: 'RecordAttempt', attempt: attempt('a', 1) })
      .then([{ type: 'WebhookDeliveryAttempted', data: attempt('a', 1) }]));
  it('records an attempt already in the stream once (an append tried again after an unclear failure)', () =>
    spec
      .given([{ type: 'WebhookDeliveryAttempted', data: attempt('a', 1) }])
      .when({ type: 'RecordAttempt', attempt: attempt('a', 1) })
      .thenNothing());
  it('records the next attempt of the same delivery', () =>
    spec
      .given([{ type: 'WebhookDeliveryAttempted', data: attempt('a', 1) }])
      .when({ type: 'RecordAttempt', attempt: attempt('a', 2) })
      .then([{ type: 'WebhookDeliveryAttempted', data: attempt('a', 2) }]));
  it('records every retry request', () =>
    spec
      .given([{ type: 'WebhookDeliveryRetryRequested', data: { deviceId: 'd', deliveryId: 'a' } }])
      .when({ type: 'RequestRetry', deviceId: 'd', deliveryId: 'a' })
      .then([{ type: 'WebhookDeliveryRetryRequested', data: { deviceId: 'd', deliveryId: 'a' } }]));
});

describe('the delivery lane writer', () => {
  it('keeps snapshots of a lane, so that a start does not read every attempt the device ever had', async () => {
    const store = new SqliteEventStore(join(tempDir('dmg-lanes-'), 'events.sqlite'));
    const stream = webhooksStream('d');
    const attempts = LANE_SNAPSHOT_EVERY + 10;
    const lanes = createDeliveryLaneCommands(store);
    for (let n = 1; n <= attempts; n++) await lanes.handle(stream, { type: 'RecordAttempt', attempt: attempt('x', n) });
    const snapshot = await store.loadSnapshot(stream);
    expect(snapshot?.revision).toBeGreaterThanOrEqual(LANE_SNAPSHOT_EVERY - 1);
    // A new process: its writer starts from the snapshot and the events after it, and still knows the last attempts.
    const restarted = createDeliveryLaneCommands(store);
    await restarted.handle(stream, { type: 'RecordAttempt', attempt: attempt('x', attempts) });
    await restarted.handle(stream, { type: 'RecordAttempt', attempt: attempt('x', attempts - 20) });
    expect((await store.readStream(stream)).length).toBe(attempts);
    await store.close();
  });
});
