/**
 * Delivery progress, on one stream per device (`webhooks-<deviceId>`), so that the delivery log and the
 * queue of pending deliveries survive a restart and can be rebuilt from the log (docs/architecture.md, invariants 1 and 5).
 *
 * A delivery itself needs no event: it follows from the log (a domain event of a kind a webhook of the device,
 * or a global webhook, listed at that point). Only what happens to it afterwards is recorded here: the attempts of
 * every lane of the device (one per webhook, `webhookId`; absent for the hook, the webhook `default`, as before).
 */
export const webhooksStream = (deviceId: string) => `webhooks-${deviceId}`;

export type AttemptOutcome = 'delivered' | 'retrying' | 'failed';

export interface WebhookDeliveryAttemptedData {
  deviceId: string;
  /** The webhook (a lane is a webhook and a device); absent: the device's hook, the webhook `default`. */
  webhookId?: string;
  /** The envelope id, which is also the `webhook-id` header. */
  deliveryId: string;
  /** The retry round the attempt belongs to (0, then one more per retry request). */
  round: number;
  /** 1 for the first attempt of the delivery, counting every round. */
  attempt: number;
  outcome: AttemptOutcome;
  /** HTTP status of the answer, when there was one. */
  status?: number;
  error?: string;
  durationMs: number;
  attemptedAt: string;
  /** Set when outcome is `retrying`. */
  nextAttemptAt?: string;
}

export interface WebhookDeliveryRetryRequestedData {
  deviceId: string;
  /** Absent: the webhook `default`. */
  webhookId?: string;
  deliveryId: string;
}

export type DeliveryEvent =
  | { type: 'WebhookDeliveryAttempted'; data: WebhookDeliveryAttemptedData }
  | { type: 'WebhookDeliveryRetryRequested'; data: WebhookDeliveryRetryRequestedData };

export const DELIVERY_EVENT_TYPES: ReadonlySet<string> = new Set<DeliveryEvent['type']>([
  'WebhookDeliveryAttempted',
  'WebhookDeliveryRetryRequested',
]);
