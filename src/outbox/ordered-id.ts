/**
 * Time-ordered UUIDs (RFC 9562 version 7: 48 bits of Unix milliseconds, then a 12-bit counter, then
 * random bits) for outbox ids and the outbox's event ids. Ids made later sort later, so the B-tree
 * indexes they go into (the event store's event ids, the outbox read model's keys) grow at their end
 * instead of dirtying random pages on every insert: on the send path that is a large share of the cost.
 */
import { randomUUID } from 'node:crypto';

let lastMs = 0;
let counter = 0;

export function orderedUuid(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (++counter > 0xfff) {
    // More than 4096 ids in one millisecond: borrow the next one, so the order holds.
    lastMs += 1;
    counter = 0;
  }
  const time = lastMs.toString(16).padStart(12, '0');
  // randomUUID draws from a pooled buffer (cheap); its last 16 hex digits, variant bits included, are random.
  const random = randomUUID();
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${counter.toString(16).padStart(3, '0')}-${random.slice(19, 23)}-${random.slice(24)}`;
}
