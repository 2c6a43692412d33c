/**
 * How the API reads a number someone typed: forgiving where the meaning is unambiguous (`+49 (151) 1234-5678`,
 * `0049…`, `…@s.whatsapp.net`, `…@c.us`), strict where it is not (a leading single 0 is a national number:
 * refused, saying so); group ids and `<digits>@lid` pass where the field takes them. Every route reads numbers
 * through this one function (src/http/validation.ts, NUMBER_KEYWORD); what it cannot read the schema refuses.
 */

/** What a field takes: a phone number only, a number or a LID, or any chat (number, group, LID). */
export type NumberField = 'phone' | 'phone_or_lid' | 'chat';

/** The schema keyword that marks a field as a number (its value is the NumberField). */
export const NUMBER_KEYWORD = 'x-number';

export const NUMBER_EXAMPLE = '4915112345678';

export type ParsedNumber = { ok: true; value: string } | { ok: false; message: string };

const JID = /^([0-9]+)(?::[0-9]+)?@(?:s\.whatsapp\.net|c\.us)$/i;
const GROUP = /@g\.us$/i;
const LID = /@lid$/i;
/** Separators people write numbers with. */
const SEPARATORS = /[\s\-.()\u00a0\u2010-\u2015]/g;

export function parseNumber(input: string, field: NumberField): ParsedNumber {
  const text = input.trim();
  if (GROUP.test(text)) {
    return field === 'chat'
      ? { ok: true, value: text.toLowerCase() }
      : { ok: false, message: 'is a group id; a phone number is expected here' };
  }
  if (LID.test(text)) {
    return field === 'phone'
      ? { ok: false, message: 'is a LID (`…@lid`); a phone number is expected here' }
      : { ok: true, value: text.toLowerCase() };
  }
  const jid = JID.exec(text);
  const compact = jid ? jid[1] : text.replace(SEPARATORS, '');
  if (!/^\+?[0-9]+$/.test(compact)) return { ok: true, value: input }; // not a number at all: the schema says so
  if (compact.startsWith('+')) return { ok: true, value: compact.slice(1) };
  // 00 is the international call prefix: what follows is the country code.
  if (compact.startsWith('00')) return { ok: true, value: compact.slice(2) };
  if (compact.startsWith('0')) {
    return {
      ok: false,
      message: `starts with 0, a national format: write the number in the international format with the country code and without the leading 0 (e.g. ${NUMBER_EXAMPLE} for 0151 12345678 in Germany)`,
    };
  }
  return { ok: true, value: compact };
}
