/**
 * Delivery, read and played receipts for messages this device sent, and the server's refusals of them,
 * from Baileys' two receipt events: `messages.update` (one-to-one chats: `update.status`) and
 * `message-receipt.update` (per participant: receipt timestamps). Pure: the recipient JID is resolved to
 * phone digits by the caller.
 */
import { type MessageUserReceiptUpdate, type WAMessageUpdate, proto, toNumber } from 'baileys';
import type { Receipt } from '../engine.js';

export interface ReceiptOfJid extends Omit<Receipt, 'recipient'> {
  /** Whose receipt it is: a phone-number JID or a LID. */
  recipientJid: string;
}

const STATUS_OF: ReadonlyMap<number, Receipt['status']> = new Map([
  // An error acknowledgement: the server refused the message after the send (e.g. 463, account restricted).
  [proto.WebMessageInfo.Status.ERROR, 'failed'],
  [proto.WebMessageInfo.Status.DELIVERY_ACK, 'delivered'],
  [proto.WebMessageInfo.Status.READ, 'read'],
  [proto.WebMessageInfo.Status.PLAYED, 'played'],
]);

/** `messages.update`: only status changes of our own messages count (not edits, not our reads of theirs). */
export function receiptsOfMessageUpdates(updates: readonly WAMessageUpdate[], nowSeconds: number): ReceiptOfJid[] {
  const receipts: ReceiptOfJid[] = [];
  for (const { key, update } of updates) {
    if (!key.fromMe || !key.id || !key.remoteJid) continue;
    const status = typeof update.status === 'number' ? STATUS_OF.get(update.status) : undefined;
    if (!status) continue;
    receipts.push({
      waMessageId: key.id,
      status,
      recipientJid: key.remoteJid,
      timestamp: toNumber(update.messageTimestamp ?? 0) || nowSeconds,
      ...(status === 'failed'
        ? {
            error: refusalOf(update.messageStubParameters as readonly (string | null | undefined)[] | null | undefined),
          }
        : {}),
    });
  }
  return receipts;
}

/** Baileys names the server's error code first, then (for a restricted account) WhatsApp's explanation. */
function refusalOf(
  parameters: readonly (string | null | undefined)[] | null | undefined,
): NonNullable<Receipt['error']> {
  const [code, detail] = parameters ?? [];
  const why =
    code === '463' ? 'the account may not start this chat (restricted, or no privacy token for the contact)' : detail;
  return {
    code: 'refused_by_network',
    message: `WhatsApp refused the message after it was sent${code ? ` (error ${code})` : ''}${why ? `: ${why}` : ''}`,
  };
}

/** `message-receipt.update`: one participant's receipt, possibly with several timestamps at once. */
export function receiptsOfUserReceipts(
  updates: readonly MessageUserReceiptUpdate[],
  nowSeconds: number,
): ReceiptOfJid[] {
  const receipts: ReceiptOfJid[] = [];
  for (const { key, receipt } of updates) {
    const recipientJid = receipt.userJid;
    if (!key.fromMe || !key.id || !recipientJid) continue;
    const stages: Array<[Receipt['status'], number | Parameters<typeof toNumber>[0]]> = [
      ['delivered', receipt.receiptTimestamp],
      ['read', receipt.readTimestamp],
      ['played', receipt.playedTimestamp],
    ];
    for (const [status, at] of stages) {
      if (at === null || at === undefined) continue;
      receipts.push({ waMessageId: key.id, status, recipientJid, timestamp: toNumber(at) || nowSeconds });
    }
  }
  return receipts;
}
