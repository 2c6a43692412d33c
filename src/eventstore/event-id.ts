import { hash, randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/**
 * A time-ordered UUID (RFC 9562 version 7, laid out by the `uuid` package): 48 bits of Unix milliseconds,
 * then a counter seeded at random each millisecond, so ids made later sort later, also within one
 * millisecond and when the clock steps back. EventStoreDB requires UUIDs, so both stores use them;
 * time-ordered ones make the indexes they go into (the store's event-id index, read-model keys) grow at
 * their end instead of dirtying random pages.
 *
 * The random bytes come from a pool filled 4 KiB at a time: `uuid`'s own v7 asks the OS for 16 bytes per id,
 * several times slower than randomUUID, and every append makes ids (docs/notes/performance.md). With its
 * bytes given, `uuid` keeps no counter, so the counter is kept here as it keeps it.
 */
export function orderedUuid(): string {
  const random = randomBytes16();
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    // 31 random bits: room to count up within the millisecond.
    clock.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
  } else {
    clock.seq = (clock.seq + 1) | 0;
    if (clock.seq === 0) clock.msecs += 1;
  }
  return v7({ random, msecs: clock.msecs, seq: clock.seq });
}

const clock = { msecs: -Infinity, seq: 0 };
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** 16 random bytes from the pool: valid until the next call (copy them to keep them). */
export function randomBytes16(): Uint8Array {
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  poolAt += 16;
  return pool.subarray(poolAt - 16, poolAt);
}

/** The id of a new event when the caller gives none. */
export const newEventId = (): string => orderedUuid();

/**
 * A deterministic UUID (v5 layout, SHA-1 of a name) for events that a retry could append twice:
 * the same name always gives the same id, so the store turns the second append into a no-op.
 * Not `uuid`'s v5: that hashes a 16-byte namespace before the name, and these ids hash "dmg-event:" and
 * the name; ids already in stores must stay the same, or a retry after an upgrade would append twice.
 */
export function deterministicEventId(name: string): string {
  // One-shot hash: half the cost of a Hash object, for an id made per inbound message and per delivery attempt.
  return uuidOf(hash('sha1', `dmg-event:${name}`, 'buffer'));
}

/**
 * Deterministic ids for many events made at once (a chunk of history): the first half of each is the group's, the
 * second half the name's (v5 layout, as deterministicEventId). Ids of one group sort side by side, so an append of
 * hundreds of them goes into a few neighbouring pages of the store's id index instead of one random page each.
 * Unique within a group while names are (62 bits of each name's hash); the same group and name give the same id.
 */
export function groupedEventIds(group: string): (name: string) => string {
  const prefix = hash('sha1', `dmg-event-group:${group}`, 'buffer');
  return (name) => {
    const bytes = hash('sha1', `dmg-event:${group}/${name}`, 'buffer');
    prefix.copy(bytes, 0, 0, 8);
    return uuidOf(bytes);
  };
}

/** A v5 UUID's text from the first 16 bytes of a hash (version and variant bits set). */
function uuidOf(bytes: Buffer): string {
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
