/**
 * Message ids in WhatsApp Web's format ("3EB0" + 18 upper-case hex digits), so the outbox assigns a message's
 * waMessageId when it is queued and every engine sends with exactly that id. The construction of Baileys'
 * generateMessageIDV2 (SHA-256 over the time, the account and 16 random bytes), written out here because
 * loading Baileys is slow and large (docs/notes/performance.md), which the outbox should not pay for an id.
 */
import { hash } from 'node:crypto';
import { randomBytes16 } from '../eventstore/event-id.js';

export const WA_MESSAGE_ID_PATTERN = /^3EB0[0-9A-F]{18}$/;

/** `accountJid`: the linked account, when known ("4915…@s.whatsapp.net"); mixed into the hash as WhatsApp Web does. */
export function newWaMessageId(accountJid?: string): string {
  const data = Buffer.alloc(8 + 20 + 16);
  data.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 1000)));
  const user = accountJid?.split('@')[0]?.split(':')[0];
  if (user) data.write(`${user}@c.us`.slice(0, 20), 8);
  // From a pool filled 4 KiB at a time: asking the OS for 16 bytes per id cost more than the rest of a send's id work.
  data.set(randomBytes16(), 28);
  return waMessageIdOf(hash('sha256', data, 'buffer'));
}

/** The WhatsApp Web prefix, as bytes: "3EB0" in hex. */
const PREFIX = Buffer.from([0x3e, 0xb0]);

/**
 * "3EB0" and the first 9 bytes of `bytes` in upper-case hex, made as one flat string. Joined from pieces
 * (`3EB0${hex}`), V8 keeps a rope that every comparison walks piece by piece, and ids are compared a lot
 * (an inbox checks each new message against its last 500; the cost: docs/notes/performance.md).
 */
export function waMessageIdOf(bytes: Uint8Array): string {
  return Buffer.concat([PREFIX, bytes.subarray(0, 9)])
    .toString('hex')
    .toUpperCase();
}
