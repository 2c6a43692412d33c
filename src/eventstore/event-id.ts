import { createHash, randomUUID } from 'node:crypto';

/** A random event id (UUID v4): EventStoreDB requires UUIDs, so both stores use them. */
export const newEventId = (): string => randomUUID();

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
