/**
 * Receipts of statuses: every receipt goes to the outbox's receipt writer as before; a read (or played) receipt
 * of a status this device posted, from a number, is also a view, recorded once per viewer as StatusViewed on the
 * inbox stream (through its one writer), which fills GET /status's `viewers`.
 */
import type { ReceiptRecorder } from '../actors/message-sink.js';
import type { Receipt } from '../engines/engine.js';
import { deterministicEventId } from '../eventstore/event-id.js';
import type { InboxCommands } from '../inbox/inbox-commands.js';
import { PHONE_PATTERN } from '../messages/chat-id.js';
import type { StatusesReadModel } from './statuses-read-model.js';

const PHONE = new RegExp(PHONE_PATTERN);

export class StatusReceipts implements ReceiptRecorder {
  constructor(
    private readonly receipts: ReceiptRecorder,
    private readonly statuses: Pick<StatusesReadModel, 'isStatus'>,
    private readonly inbox: Pick<InboxCommands, 'record'>,
  ) {}

  async record(deviceId: string, receipt: Receipt): Promise<void> {
    await this.receipts.record(deviceId, receipt);
    if (receipt.status !== 'read' && receipt.status !== 'played') return;
    if (!PHONE.test(receipt.recipient) || !this.statuses.isStatus(deviceId, receipt.waMessageId)) return;
    const { waMessageId, recipient: viewer, timestamp } = receipt;
    await this.inbox.record(
      deviceId,
      { type: 'StatusViewed', data: { deviceId, waMessageId, viewer, timestamp } },
      deterministicEventId(`${deviceId}/status-view/${waMessageId}/${viewer}`),
    );
  }
}
