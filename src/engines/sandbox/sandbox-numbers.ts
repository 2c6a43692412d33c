/**
 * The sandbox's rules for phone numbers (docs/api-guide.md, "Sessions and the sandbox engine"): numbers ending in 0000 do not
 * exist, every other one does; a number ending in an odd digit has no avatar.
 */
export const numberExists = (number: string): boolean => !number.endsWith('0000');

/** The WhatsApp-style address of a number. */
export const jidOf = (number: string): string => `${number}@s.whatsapp.net`;

/** null for odd last digits and for numbers that do not exist; otherwise a URL that never changes. */
export function avatarUrlOf(number: string): string | null {
  if (!numberExists(number)) return null;
  const last = Number(number[number.length - 1]);
  return Number.isInteger(last) && last % 2 === 0 ? `https://sandbox.invalid/avatars/${number}.jpg` : null;
}
