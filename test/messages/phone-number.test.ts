import { describe, expect, it } from 'vitest';
import { parseNumber } from '../../src/messages/phone-number.js';

describe('parseNumber', () => {
  it('reads the unambiguous ways of writing a number as its digits', () => {
    for (const written of [
      '4915112345678',
      '+4915112345678',
      '+49 151 12345678',
      '+49-151-1234-5678',
      '+49 (151) 1234.5678',
      ' 0049 151 12345678 ',
      '4915112345678@s.whatsapp.net',
      '4915112345678@C.US',
      '4915112345678:3@s.whatsapp.net',
      '+49\u00a0151\u00a012345678',
    ]) {
      expect(parseNumber(written, 'phone'), written).toEqual({ ok: true, value: '4915112345678' });
    }
  });

  it('refuses a national number (leading 0) with words naming the fix', () => {
    const parsed = parseNumber('0151 12345678', 'chat');
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toMatch(/international format.*country code/);
  });

  it('takes groups and LIDs only where the field does', () => {
    expect(parseNumber('120363000000000001@g.us', 'chat')).toEqual({ ok: true, value: '120363000000000001@g.us' });
    expect(parseNumber('120363000000000001@g.us', 'phone').ok).toBe(false);
    expect(parseNumber('120363000000000001@g.us', 'phone_or_lid').ok).toBe(false);
    expect(parseNumber('123456@lid', 'phone_or_lid')).toEqual({ ok: true, value: '123456@lid' });
    expect(parseNumber('123456@lid', 'phone').ok).toBe(false);
  });

  it('leaves what is not a number to the schema', () => {
    for (const text of ['call me', '+49 151 abc', '', '++49151', '49+151'])
      expect(parseNumber(text, 'phone'), text).toEqual({ ok: true, value: text });
  });
});
