/**
 * The deliveries log of each webhook (GET /hooks/deliveries for a device's hook, the webhook `default`;
 * GET …/webhooks/:webhookId/deliveries for the others) and its one command: deliver a record again. A retry
 * request is an event on the device's delivery stream, written through that stream's one writer; the read
 * model turns it into a pending delivery due now, and the dispatcher picks it up in the lane's order.
 */
import { DomainError } from '../errors/domain-error.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import { webhooksStream } from './delivery-events.js';
import { hookWants } from './envelope.js';
import { hooksNotConfigured } from './hook-settings.js';
import { webhookNotFound } from './webhook-settings-decider.js';
import { DEFAULT_WEBHOOK_ID } from './webhook-settings-events.js';
import type { DeliveryLaneCommands } from './webhooks.js';
import type { DeliveryPageOptions, DeliveryView, WebhookBacklog, WebhooksReadModel } from './webhooks-read-model.js';

const noSuchDelivery = (deliveryId: string) => new DomainError('not_found', `delivery "${deliveryId}" does not exist`);

export class DeliveryLog {
  constructor(
    private readonly lanes: DeliveryLaneCommands,
    private readonly progress: ReadModelProgress,
    private readonly model: WebhooksReadModel,
  ) {}

  /** The log of the device's hook. `detail`: with why unreachable receivers were (the admin's view). */
  list(deviceId: string, options: DeliveryPageOptions) {
    return this.model.list(deviceId, options);
  }

  /** A webhook's log: of the device's webhook, or (`deviceId` undefined) of a global webhook, over every device. */
  listOf(webhookId: string, deviceId: string | undefined, options: DeliveryPageOptions) {
    return this.model.webhookDeliveries(webhookId, deviceId, options);
  }

  /** Per device with deliveries waiting (over all its webhooks): how many, and since when the oldest (GET /overview). */
  backlogByDevice(): Map<string, WebhookBacklog> {
    return this.model.backlogByDevice();
  }

  /** Delivers a record of the device's hook again. */
  retry(deviceId: string, deliveryId: string): Promise<DeliveryView> {
    return this.retryOf(DEFAULT_WEBHOOK_ID, deviceId, deliveryId);
  }

  /** Delivers a record of a webhook again (`deviceId` undefined: a global webhook's, of whichever device). */
  async retryOf(webhookId: string, deviceId: string | undefined, deliveryId: string): Promise<DeliveryView> {
    const delivery = this.model.webhookDelivery(webhookId, deviceId, deliveryId);
    if (!delivery) throw noSuchDelivery(deliveryId);
    const device = deviceId ?? delivery.deviceId!;
    const isHook = webhookId === DEFAULT_WEBHOOK_ID;
    const webhook = this.model.target(device, webhookId);
    if (!webhook) throw isHook ? hooksNotConfigured(device) : webhookNotFound(webhookId);
    // Only the kinds the webhook lists go out (the read model also ignores such a retry, should it change meanwhile).
    if (!hookWants(webhook.events, delivery.event)) {
      throw new DomainError(
        isHook ? 'hooks_not_configured' : 'not_found',
        isHook
          ? `the hook of device "${device}" does not list ${delivery.event} in its events`
          : `the webhook "${webhookId}" does not list ${delivery.event} in its events`,
        { reason: 'kind_not_listed' },
      );
    }
    const { position } = await this.lanes.handle(webhooksStream(device), {
      type: 'RequestRetry',
      deviceId: device,
      ...(isHook ? {} : { webhookId }),
      deliveryId,
    });
    await this.progress.settle(position);
    const view = this.model.webhookDelivery(webhookId, deviceId, deliveryId);
    if (!view) throw noSuchDelivery(deliveryId); // pruned in the meantime
    return view;
  }
}
