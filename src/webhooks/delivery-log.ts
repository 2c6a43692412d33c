/**
 * The deliveries log of a device (GET /hooks/deliveries) and its one command: deliver a record again.
 * A retry request is an event on the device's delivery stream, written through that stream's one writer;
 * the read model turns it into a pending delivery due now, and the dispatcher picks it up in the
 * device's order.
 */
import { DomainError } from '../errors/domain-error.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { webhooksStream } from './delivery-events.js';
import { hookWants } from './envelope.js';
import { hooksNotConfigured } from './hook-settings.js';
import type { DeliveryLaneWriter } from './webhooks.js';
import type { DeliveryStatus, DeliveryView, WebhooksReadModel } from './webhooks-read-model.js';

const noSuchDelivery = (deliveryId: string) => new DomainError('not_found', `delivery "${deliveryId}" does not exist`);

export class DeliveryLog {
  constructor(
    private readonly lanes: DeliveryLaneWriter,
    private readonly progress: ReadModelProgress,
    private readonly model: WebhooksReadModel,
  ) {}

  /** `detail`: with why unreachable receivers were (the admin's view). */
  list(deviceId: string, options: { status?: DeliveryStatus; limit: number; before?: number; detail?: boolean }) {
    return this.model.list(deviceId, options);
  }

  async retry(deviceId: string, deliveryId: string): Promise<DeliveryView> {
    const delivery = this.model.delivery(deviceId, deliveryId);
    if (!delivery) throw noSuchDelivery(deliveryId);
    const hook = this.model.hook(deviceId);
    if (!hook) throw hooksNotConfigured(deviceId);
    // Only the kinds the hook lists go out (the read model also ignores such a retry, should the hook change meanwhile).
    if (!hookWants(hook.events, delivery.event)) {
      throw new DomainError(
        'hooks_not_configured',
        `the hook of device "${deviceId}" does not list ${delivery.event} in its events`,
        { reason: 'kind_not_listed' },
      );
    }
    const { position } = await this.lanes.handle(webhooksStream(deviceId), {
      type: 'RequestRetry',
      deviceId,
      deliveryId,
    });
    await this.progress.settle(position);
    const view = this.model.delivery(deviceId, deliveryId);
    if (!view) throw noSuchDelivery(deliveryId); // pruned in the meantime
    return view;
  }
}
