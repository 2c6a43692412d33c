/**
 * Receipts go through the device's outbox, the one writer of its stream: a MessageSink in front of the
 * device actors' default sink that records `delivered`, `read` and `played` with the message's outboxId
 * when the outbox sent it (so every `message.status` webhook of it carries the outboxId). The event's
 * type, stream and deterministic id are those of the default sink; inbound messages and contacts go to
 * the default sink unchanged.
 */
import type { MessageSink } from '../../actors/message-sink.js';
import type { ChatActivity, Contact, InboundMessage, Receipt } from '../../engines/engine.js';
import { recordReceipt } from '../stream/outbox-decisions.js';
import type { OutboxReadModel } from '../read-models/outbox-read-model.js';
import type { Outboxes } from '../stream/outboxes.js';

export class OutboxReceipts implements MessageSink {
  constructor(
    private readonly inner: MessageSink,
    private readonly outboxes: Pick<Outboxes, 'execute'>,
    private readonly outboxView: Pick<OutboxReadModel, 'byWaMessageId'>,
  ) {}

  received(deviceId: string, message: InboundMessage): Promise<void> {
    return this.inner.received(deviceId, message);
  }

  contacts(deviceId: string, contacts: Contact[]): Promise<void> {
    return this.inner.contacts(deviceId, contacts);
  }

  async activity(deviceId: string, activity: ChatActivity): Promise<void> {
    await this.inner.activity?.(deviceId, activity);
  }

  async receipt(deviceId: string, receipt: Receipt): Promise<void> {
    await this.outboxes.execute(
      deviceId,
      recordReceipt(deviceId, receipt, (waMessageId) => this.outboxView.byWaMessageId(deviceId, waMessageId)),
    );
  }
}
