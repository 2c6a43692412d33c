/**
 * How contacts are written and searched: the WhatsApp address of a number, and names folded for a
 * search that ignores case and accents ("jose" finds "José").
 */

/** The account-level address of a phone number, as both engines write it. */
export const jidOfNumber = (number: string): string => `${number}@s.whatsapp.net`;

/** A phone number as the gateway stores it: digits only. */
export const isNumber = (text: string): boolean => /^[0-9]{1,32}$/.test(text);

/** A LID as the gateway writes it: `<digits>@lid`. */
export const isLid = (text: string): boolean => /^[0-9]{1,32}@lid$/.test(text);

/** Lower case, compatibility forms unified, accents dropped. */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/**
 * What a search text means: a name fragment, and when it reads like a phone number ("+49 151-12"),
 * its digits, matched against numbers.
 */
export function searchTerms(q: string): { text: string; digits: string | undefined } {
  const trimmed = q.trim();
  const digits = /^[+(]*[0-9][0-9 ()./-]*$/.test(trimmed) ? trimmed.replace(/[^0-9]/g, '') : undefined;
  return { text: fold(trimmed), digits };
}
