/**
 * The sandbox's rules for phone numbers (docs/api-guide.md, "Sessions and the sandbox engine"): numbers ending in 0000 do not
 * exist, every other one does; a number ending in an odd digit has no avatar; each number has a LID of its own that
 * never changes (derived from it), which a device learns when the number writes to it.
 */
import { createHash } from 'node:crypto';

export const numberExists = (number: string): boolean => !number.endsWith('0000');

/** The WhatsApp-style address of a number. */
export const jidOf = (number: string): string => `${number}@s.whatsapp.net`;

/** null for odd last digits and for numbers that do not exist; otherwise a URL that never changes. */
export function avatarUrlOf(number: string): string | null {
  if (!numberExists(number)) return null;
  const last = Number(number[number.length - 1]);
  return Number.isInteger(last) && last % 2 === 0 ? `https://sandbox.invalid/avatars/${number}.jpg` : null;
}

/** The number's LID: 15 digits from its hash, so every run gives each number the same one. */
export function lidOf(number: string): string {
  const digits = BigInt(`0x${createHash('sha256').update(`sandbox-lid/${number}`).digest('hex').slice(0, 16)}`);
  return `${(digits % 10n ** 15n).toString().padStart(15, '1')}@lid`;
}
