import { describe, expect, it } from 'vitest';
import {
  digitsOfLid,
  isDirectChat,
  jidOfPhone,
  normalizedPhoneJid,
  phoneOfJid,
} from '../../../src/engines/baileys/jid.js';

describe('phone digits ↔ JIDs', () => {
  it('reads the phone of user JIDs, device suffix or not, hosted or not', () => {
    expect(phoneOfJid('4915112345678@s.whatsapp.net')).toBe('4915112345678');
    expect(phoneOfJid('4915112345678:12@s.whatsapp.net')).toBe('4915112345678');
    expect(phoneOfJid('4915112345678:99@hosted')).toBe('4915112345678');
    expect(normalizedPhoneJid('4915112345678:12@s.whatsapp.net')).toBe('4915112345678@s.whatsapp.net');
    expect(jidOfPhone('4915112345678')).toBe('4915112345678@s.whatsapp.net');
  });

  it('has no phone for LIDs, groups, broadcasts and junk', () => {
    for (const jid of [
      '123456789@lid',
      '120363001234567890@g.us',
      'status@broadcast',
      '1234@newsletter',
      'abc@s.whatsapp.net',
      '',
      null,
      undefined,
    ]) {
      expect(phoneOfJid(jid)).toBeUndefined();
    }
    expect(digitsOfLid('123456789:3@lid')).toBe('123456789');
    expect(digitsOfLid('123456789@hosted.lid')).toBe('123456789');
    expect(digitsOfLid('4915112345678@s.whatsapp.net')).toBeUndefined();
  });

  it('counts only one-to-one chats as direct', () => {
    expect(isDirectChat('4915112345678@s.whatsapp.net')).toBe(true);
    expect(isDirectChat('123456789@lid')).toBe(true);
    expect(isDirectChat('120363001234567890@g.us')).toBe(false);
    expect(isDirectChat('status@broadcast')).toBe(false);
    expect(isDirectChat('1234@newsletter')).toBe(false);
    expect(isDirectChat(undefined)).toBe(false);
  });
});
