/**
 * Contact cards as vCard 3.0 (RFC 2426), the form WhatsApp carries them in. Every value is escaped
 * (backslash, comma, semicolon, and newlines of any kind), so a field can never end its line and
 * inject properties of its own.
 */
import type { ContactCard } from './message-events.js';

/** RFC 2426 §4 text escaping; CR, LF and CRLF all become `\n`. */
export function escapeVCardText(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\r\n|\r|\n|\u2028|\u2029|\u0085/g, '\\n')
    .replace(/,/g, '\\,')
    .replace(/;/g, '\\;');
}

function unescapeVCardText(text: string): string {
  return text.replace(/\\([\\,;nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
}

const digitsOf = (phone: string) => phone.replace(/\D/g, '');

/** One card; the phone carries WhatsApp's `waid` so that the recipient's app offers to message it. */
export function vCardOf(card: ContactCard): string {
  const digits = digitsOf(card.phone);
  const lines = [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `FN:${escapeVCardText(card.name)}`,
    `N:;${escapeVCardText(card.name)};;;`,
  ];
  if (card.organization !== undefined) lines.push(`ORG:${escapeVCardText(card.organization)}`);
  lines.push(`TEL;type=CELL;type=VOICE;waid=${digits}:+${digits}`);
  if (card.email !== undefined) lines.push(`EMAIL;type=INTERNET:${escapeVCardText(card.email)}`);
  lines.push('END:VCARD');
  return lines.join('\n');
}

/** The card a received vCard describes (name, first phone, organization, email); `fallbackName` when it has no FN. */
export function contactCardOf(vcard: string | null | undefined, fallbackName = ''): ContactCard | undefined {
  if (!vcard) return undefined;
  // Folded lines (RFC 2426 §2.6) continue with a space or tab.
  const lines = vcard.replace(/\r?\n[ \t]/g, '').split(/\r?\n/);
  const card: Partial<ContactCard> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const head = line.slice(0, colon).toUpperCase();
    const value = line.slice(colon + 1);
    const name = head.split(';')[0].replace(/^ITEM\d+\./, '');
    if (name === 'FN' && card.name === undefined) card.name = unescapeVCardText(value);
    else if (name === 'ORG' && card.organization === undefined)
      card.organization = unescapeVCardText(value.replace(/;+$/, ''));
    else if (name === 'EMAIL' && card.email === undefined) card.email = unescapeVCardText(value);
    else if (name === 'TEL' && card.phone === undefined) {
      const waid = /WAID=(\d+)/.exec(head)?.[1];
      card.phone = waid ?? digitsOf(value);
    }
  }
  const result: ContactCard = { name: card.name ?? fallbackName, phone: card.phone ?? '' };
  if (card.organization) result.organization = card.organization;
  if (card.email) result.email = card.email;
  return result;
}
