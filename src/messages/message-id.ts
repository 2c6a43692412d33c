/**
 * Message ids in the format WhatsApp Web uses ("3EB0" + 18 upper-case hex digits), so the outbox can
 * assign a message's waMessageId when it is queued and the engine sends with exactly that id.
 *
 * The same construction as Baileys' generateMessageIDV2 (after whatsmeow): SHA-256 over the time, the
 * account and 16 random bytes. Written out here rather than imported because loading Baileys costs
 * ~0.6 s and ~55 MB, which the outbox (also used by sandbox devices) should not pay for an id. Every
 * engine sends with the id the outbox assigned, so it lives here, with no engine.
 */
import { createHash, randomBytes } from 'node:crypto';

export const WA_MESSAGE_ID_PATTERN = /^3EB0[0-9A-F]{18}$/;

/** `accountJid`: the linked account, when known ("4915…@s.whatsapp.net"); mixed into the hash as WhatsApp Web does. */
export function newWaMessageId(accountJid?: string): string {
  const data = Buffer.alloc(8 + 20 + 16);
  data.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 1000)));
  const user = accountJid?.split('@')[0]?.split(':')[0];
  if (user) data.write(`${user}@c.us`.slice(0, 20), 8);
  randomBytes(16).copy(data, 28);
  return `3EB0${createHash('sha256').update(data).digest('hex').toUpperCase().slice(0, 18)}`;
}
