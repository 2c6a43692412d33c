/**
 * Receipts go through the device's outbox, the one writer of its stream: the message sink's receipt writer
 * (src/actors/message-sink.ts, ReceiptRecorder) records `delivered`, `read`, `played` (and `failed`) as the
 * outbox decider decides (RecordReceipt): with the message's outboxId when the outbox sent it (so every
 * `message.status` webhook of it carries the outboxId), once (a repeat is dropped), under an event id derived
 * from the receipt.
 */
import type { ReceiptRecorder } from '../../actors/message-sink.js';
import type { Receipt } from '../../engines/engine.js';
import type { OutboxReadModel } from '../read-models/outbox-read-model.js';
import type { Outboxes } from '../stream/outboxes.js';

export class OutboxReceipts implements ReceiptRecorder {
  constructor(
    private readonly outboxes: Pick<Outboxes, 'execute'>,
    private readonly outboxView: Pick<OutboxReadModel, 'byWaMessageId'>,
  ) {}

  async record(deviceId: string, receipt: Receipt): Promise<void> {
    const command = { type: 'RecordReceipt', deviceId, receipt } as const;
    const { result } = await this.outboxes.execute(deviceId, command);
    if (result.kind !== 'look-up') return;
    // A message the outbox no longer remembers: decided again with the read model's record of it.
    const sent = this.outboxView.byWaMessageId(deviceId, receipt.waMessageId) ?? null;
    await this.outboxes.execute(deviceId, { ...command, sent });
  }
}
