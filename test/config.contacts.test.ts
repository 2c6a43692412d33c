/** The contacts settings (README, Settings). */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('contacts settings', () => {
  it('defaults to 30 fresh checks a minute, bursts of 10, checks cached 24 h and avatars 1 h', () => {
    expect(loadConfig({}).contacts).toEqual({
      checkRatePerMinute: 30,
      checkBurst: 10,
      checkCacheTtlMs: 86_400_000,
      avatarCacheTtlMs: 3_600_000,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      CONTACT_CHECK_RATE_PER_MINUTE: '120',
      CONTACT_CHECK_BURST: '20',
      CONTACT_CHECK_CACHE_TTL: '7d',
      CONTACT_AVATAR_CACHE_TTL: '15m',
    });
    expect(config.contacts).toEqual({
      checkRatePerMinute: 120,
      checkBurst: 20,
      checkCacheTtlMs: 7 * 86_400_000,
      avatarCacheTtlMs: 15 * 60_000,
    });
  });

  it('keeps the default burst within a lower rate', () => {
    expect(loadConfig({ CONTACT_CHECK_RATE_PER_MINUTE: '4' }).contacts.checkBurst).toBe(4);
  });

  it.each([
    ['CONTACT_CHECK_RATE_PER_MINUTE', '0'],
    ['CONTACT_CHECK_RATE_PER_MINUTE', 'lots'],
    ['CONTACT_CHECK_BURST', '31'],
    ['CONTACT_CHECK_BURST', '0'],
    ['CONTACT_CHECK_CACHE_TTL', '24'],
    ['CONTACT_AVATAR_CACHE_TTL', '0s'],
  ])('names %s when it is %s', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^${variable}: `));
  });
});
