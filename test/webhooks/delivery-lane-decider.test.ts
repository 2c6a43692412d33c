import { describe, it } from 'vitest';
import type { WebhookDeliveryAttemptedData } from '../../src/webhooks/delivery-events.js';
import { deliveryLaneDecider } from '../../src/webhooks/delivery-lane-decider.js';
import { deciderSpecification } from '../support/decider-specification.js';

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
    spec.given([]).when({ type: 'RecordAttempt', attempt: attempt('a', 1) }).then([{ type: 'WebhookDeliveryAttempted', data: attempt('a', 1) }]));
  it('records an attempt already in the stream once (an append tried again after an unclear failure)', () =>
    spec.given([{ type: 'WebhookDeliveryAttempted', data: attempt('a', 1) }]).when({ type: 'RecordAttempt', attempt: attempt('a', 1) }).thenNothing());
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
