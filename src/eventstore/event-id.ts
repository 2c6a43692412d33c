import { createHash } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * A time-ordered UUID (RFC 9562 version 7, from the `uuid` package): 48 bits of Unix milliseconds, then a
 * counter seeded at random each millisecond, so ids made later sort later, also within one millisecond and
 * when the clock steps back. EventStoreDB requires UUIDs, so both stores use them; time-ordered ones make the
 * indexes they go into (the store's event-id index, read-model keys) grow at their end instead of dirtying
 * random pages.
 */
export const orderedUuid = (): string => v7();

/** The id of a new event when the caller gives none. */
export const newEventId = (): string => v7();

/**
 * A deterministic UUID (v5 layout, SHA-1 of a name) for events that a retry could append twice:
 * the same name always gives the same id, so the store turns the second append into a no-op.
 * Not `uuid`'s v5: that hashes a 16-byte namespace before the name, and these ids hash "dmg-event:" and
 * the name; ids already in stores must stay the same, or a retry after an upgrade would append twice.
 */
export function deterministicEventId(name: string): string {
  const bytes = createHash('sha1').update('dmg-event:').update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
