import type { Logger } from 'pino';
import type { EventStore, StoredEvent, Subscription } from '../eventstore/event-store.js';
import type { MessageStatusChangedData } from '../messages/message-events.js';
import type { WebhookDeliveryAttemptedData } from '../webhooks/delivery-events.js';
import type { Metrics } from './metrics.js';

/** Maps one domain event to the counters it moves; events of other types move none. */
export type EventCounter = (event: StoredEvent, metrics: Metrics) => void;

const COUNTERS: Record<string, EventCounter> = {
  MessageStatusChanged: (event, metrics) => metrics.messageStatuses.inc({ status: (event.data as MessageStatusChangedData).status }),
  MessageReceived: (_, metrics) => metrics.messagesReceived.inc(),
  WebhookDeliveryAttempted: (event, metrics) => {
    const { outcome, durationMs } = event.data as WebhookDeliveryAttemptedData;
    metrics.webhookDeliveries.inc({ outcome });
    metrics.webhookLatency.observe(durationMs / 1000);
  },
};

/**
 * Counts domain events as they are appended, from a live subscription that starts at the end of the log:
 * counters describe this process's lifetime (Prometheus handles the reset at restart), and a restart or a
 * rebuild never counts history twice.
 */
export class EventMetrics {
  private subscription: Subscription | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly metrics: Metrics) {}

  start(store: EventStore, after: number, log: Logger): void {
    const subscription = store.subscribe({ after });
    this.subscription = subscription;
    this.loop = (async () => {
      try {
        for await (const batch of subscription) {
          for (const event of batch) COUNTERS[event.type]?.(event, this.metrics);
        }
      } catch (error) {
        log.warn({ err: error }, 'event metrics stopped');
      }
    })();
  }

  async stop(): Promise<void> {
    await this.subscription?.close();
    await this.loop;
  }
}
