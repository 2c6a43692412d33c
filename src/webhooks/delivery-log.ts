/**
 * The deliveries log of a device (GET /hooks/deliveries) and its one command: deliver a record again.
 * A retry request is an event on the device's delivery stream; the read model turns it into a pending
 * delivery due now, and the dispatcher picks it up in the device's order.
 */
import type { EventStore, NewEvent } from '../eventstore/event-store.js';
import { notFound } from '../http/problem.js';
import type { ProjectionRunner } from '../projections/projection-runner.js';
import { type DeliveryEvent, deliveryStream } from './delivery-events.js';
import { hooksNotConfigured } from './problems.js';
import type { DeliveryStatus, DeliveryView, WebhooksReadModel } from './webhooks-read-model.js';

export class DeliveryLog {
  constructor(
    private readonly store: EventStore,
    private readonly runner: ProjectionRunner,
    private readonly model: WebhooksReadModel,
  ) {}

  list(deviceId: string, options: { status?: DeliveryStatus; limit: number; before?: number }) {
    return this.model.list(deviceId, options);
  }

  async retry(deviceId: string, deliveryId: string): Promise<DeliveryView> {
    if (!this.model.delivery(deviceId, deliveryId)) throw notFound(`delivery "${deliveryId}" does not exist`);
    if (!this.model.hook(deviceId)) throw hooksNotConfigured(deviceId);
    const event: DeliveryEvent = { type: 'WebhookDeliveryRetryRequested', data: { deviceId, deliveryId } };
    const { position } = await this.store.append(deliveryStream(deviceId), [event as NewEvent]);
    await this.runner.waitFor(position);
    const view = this.model.delivery(deviceId, deliveryId);
    if (!view) throw notFound(`delivery "${deliveryId}" does not exist`);
    return view;
  }
}
