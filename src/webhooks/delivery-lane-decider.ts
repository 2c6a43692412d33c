/**
 * The decider of a device's delivery stream (`webhooks-<deviceId>`, every lane of the device): attempts recorded by the dispatcher
 * and retries requested through the deliveries log, both through one command handler (the stream's one
 * writer, created in webhooks.ts).
 *
 * Its state is only what deciding needs: the keys of the latest attempts, so that an attempt whose append
 * is tried again after an unclear failure (it may have landed) is recorded once, whatever the store's own
 * deduplication keeps.
 */
import type { Decider } from '../commands/decider.js';
import { DELIVERY_EVENT_TYPES, type DeliveryEvent, type WebhookDeliveryAttemptedData } from './delivery-events.js';

/** A lane makes one attempt at a time, so a retried append can only repeat one of the last few of its device's lanes. */
const REMEMBERED_ATTEMPTS = 64;

export interface DeliveryLaneState {
  recentAttempts: readonly string[];
}

export type DeliveryLaneCommand =
  | { type: 'RecordAttempt'; attempt: WebhookDeliveryAttemptedData }
  | { type: 'RequestRetry'; deviceId: string; webhookId?: string; deliveryId: string };

/** The webhook `default` (the hook) keeps the key it had before devices had several webhooks. */
export const attemptKey = (deliveryId: string, attempt: number, webhookId?: string) =>
  webhookId === undefined ? `${deliveryId}:${attempt}` : `${webhookId}:${deliveryId}:${attempt}`;

export const deliveryLaneDecider: Decider<DeliveryLaneState, DeliveryLaneCommand, DeliveryEvent> = {
  eventTypes: DELIVERY_EVENT_TYPES,

  initialState: () => ({ recentAttempts: [] }),

  evolve(state, event) {
    if (event.type !== 'WebhookDeliveryAttempted') return state;
    const recent = [
      ...state.recentAttempts,
      attemptKey(event.data.deliveryId, event.data.attempt, event.data.webhookId),
    ];
    return { recentAttempts: recent.length > REMEMBERED_ATTEMPTS ? recent.slice(-REMEMBERED_ATTEMPTS) : recent };
  },

  decide(command, state) {
    switch (command.type) {
      case 'RecordAttempt': {
        const { attempt } = command;
        if (state.recentAttempts.includes(attemptKey(attempt.deliveryId, attempt.attempt, attempt.webhookId)))
          return [];
        return [{ type: 'WebhookDeliveryAttempted', data: attempt }];
      }
      case 'RequestRetry':
        return [
          {
            type: 'WebhookDeliveryRetryRequested',
            data: {
              deviceId: command.deviceId,
              ...(command.webhookId === undefined ? {} : { webhookId: command.webhookId }),
              deliveryId: command.deliveryId,
            },
          },
        ];
    }
  },
};
