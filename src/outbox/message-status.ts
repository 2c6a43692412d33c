/**
 * How a message's status moves when a new one is reported: receipts only ever move it forward (a late
 * `delivered` after `read` changes nothing), and a message that failed, was cancelled, deleted or expired stays so.
 */
import type { MessageStatusChangedData } from '../messages/message-events.js';

const RANK: Record<string, number> = { queued: 0, sending: 0, sent: 1, delivered: 2, read: 3, played: 4 };
const PENDING: ReadonlySet<string> = new Set(['queued', 'sending']);
const GONE: ReadonlySet<string> = new Set(['failed', 'cancelled', 'deleted', 'expired']);

/** The status a message has after `next` was reported while it had `current`. */
export function nextStatus(current: string, next: MessageStatusChangedData['status']): string {
  if (next === 'deleted') return GONE.has(current) || PENDING.has(current) ? current : 'deleted';
  if (next === 'failed' || next === 'cancelled' || next === 'expired') return PENDING.has(current) ? next : current;
  if (GONE.has(current)) return current;
  return (RANK[next] ?? 0) > (RANK[current] ?? 0) ? next : current;
}
