import { createHash, randomUUID } from 'node:crypto';

let lastMs = 0;
let counter = 0;

/**
 * A time-ordered UUID (RFC 9562 version 7: 48 bits of Unix milliseconds, a 12-bit counter, random bits).
 * EventStoreDB requires UUIDs, so both stores use them; ids made later sort later, so the indexes they go
 * into (the store's event-id index, read-model keys) grow at their end instead of dirtying random pages.
 */
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

/** The id of a new event when the caller gives none. */
export const newEventId = (): string => orderedUuid();

/**
 * A deterministic UUID (v5 layout, SHA-1 of a name) for events that a retry could append twice:
 * the same name always gives the same id, so the store turns the second append into a no-op.
 */
export function deterministicEventId(name: string): string {
  const bytes = createHash('sha1').update('dmg-event:').update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
