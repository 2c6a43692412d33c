import type { Logger } from 'pino';
import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import { followAll } from '../eventstore/follow-all.js';
import type { MessageStatusChangedData } from '../messages/message-events.js';
import type { WebhookDeliveryAttemptedData } from '../webhooks/delivery-events.js';
import type { Metrics } from './metrics.js';

/** Maps one domain event to the counters it moves; events of other types move none. */
export type EventCounter = (event: StoredEvent, metrics: Metrics) => void;

const COUNTERS: Record<string, EventCounter> = {
  MessageStatusChanged: (event, metrics) =>
    metrics.messageStatuses.inc({ status: (event.data as MessageStatusChangedData).status }),
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
  private following: { stop(): Promise<void> } | undefined;

  constructor(private readonly metrics: Metrics) {}

  /** Survives subscription drops: it subscribes again after the last event it counted. */
  start(store: EventStore, after: number, log: Logger): void {
    this.following = followAll(store, {
      after,
      name: 'event metrics',
      log,
      onBatch: (batch) => {
        for (const event of batch) COUNTERS[event.type]?.(event, this.metrics);
      },
    });
  }

  async stop(): Promise<void> {
    await this.following?.stop();
  }
}
