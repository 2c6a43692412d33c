import { describe, expect, it } from 'vitest';
import { contactCardOf, escapeVCardText, vCardOf } from '../../src/messages/vcard.js';

describe('vCards', () => {
  it('escapes every newline form, backslashes, commas and semicolons: an injected line never becomes a property', () => {
    const card = vCardOf({
      name: 'Eve\r\nTEL:+1999\nEND:VCARD\rX',
      phone: '+49 (151) 000-111',
      organization: 'A;B,C\\D',
      email: 'e@x.io\u2028BDAY:1',
    });
    const lines = card.split('\n');
    expect(lines[0]).toBe('BEGIN:VCARD');
    expect(lines.at(-1)).toBe('END:VCARD');
    expect(lines.filter((l) => l.startsWith('TEL'))).toEqual([
      'TEL;type=CELL;type=VOICE;waid=49151000111:+49151000111',
    ]);
    expect(lines.filter((l) => l === 'END:VCARD')).toHaveLength(1);
    expect(lines.some((l) => l.startsWith('BDAY'))).toBe(false);
    expect(lines).toContain('FN:Eve\\nTEL:+1999\\nEND:VCARD\\nX');
    expect(lines).toContain('ORG:A\\;B\\,C\\\\D');
    expect(escapeVCardText('a\u0085b')).toBe('a\\nb');
  });

  it('reads back what it wrote (and the cards WhatsApp sends)', () => {
    const card = {
      name: 'Eve; "the\nsecond"',
      phone: '49151000111',
      organization: 'ACME, Inc',
      email: 'eve@example.com',
    };
    expect(contactCardOf(vCardOf(card))).toEqual(card);
    const whatsapp =
      'BEGIN:VCARD\nVERSION:3.0\nN:;Bob;;;\nFN:Bob\nitem1.TEL;waid=4915112345678:+49 151 12345678\nitem1.X-ABLabel:Mobile\nEND:VCARD';
    expect(contactCardOf(whatsapp)).toEqual({ name: 'Bob', phone: '4915112345678' });
    expect(contactCardOf(undefined)).toBeUndefined();
  });
});
