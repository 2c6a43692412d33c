/**
 * How a message's status moves when a new one is reported: receipts only ever move it forward (a late
 * `delivered` after `read` changes nothing), and a message that failed, was cancelled, deleted or expired stays so.
 * A message the network accepted may still fail: the server refuses it after the send (an error
 * acknowledgement), which can come after `sent` or `delivered`, though not once it was read or played.
 */
import type { MessageStatusChangedData } from '../../messages/message-events.js';

const RANK: Record<string, number> = { queued: 0, sending: 0, sent: 1, delivered: 2, read: 3, played: 4 };
const PENDING: ReadonlySet<string> = new Set(['queued', 'sending']);
const GONE: ReadonlySet<string> = new Set(['failed', 'cancelled', 'deleted', 'expired']);
const REFUSABLE: ReadonlySet<string> = new Set([...PENDING, 'sent', 'delivered']);

/** The status a message has after `next` was reported while it had `current`. */
export function nextStatus(current: string, next: MessageStatusChangedData['status']): string {
  if (next === 'deleted') return GONE.has(current) || PENDING.has(current) ? current : 'deleted';
  if (next === 'failed') return REFUSABLE.has(current) ? next : current;
  if (next === 'cancelled' || next === 'expired') return PENDING.has(current) ? next : current;
  if (GONE.has(current)) return current;
  return (RANK[next] ?? 0) > (RANK[current] ?? 0) ? next : current;
}
