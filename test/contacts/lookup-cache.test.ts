/** The contacts settings (README, Settings) and the lookup cache's expiry. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { LookupCache } from '../../src/contacts/lookup-cache.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { tempDir } from '../support/gateway.js';

describe('contacts settings', () => {
  it('defaults to 30 fresh checks a minute, bursts of 10, checks cached 24 h and avatars 1 h', () => {
    expect(loadConfig({}).contacts).toEqual({ checkRatePerMinute: 30, checkBurst: 10, checkCacheTtlMs: 86_400_000, avatarCacheTtlMs: 3_600_000 });
  });

  it('reads every variable', () => {
    const config = loadConfig({ CONTACT_CHECK_RATE_PER_MINUTE: '120', CONTACT_CHECK_BURST: '20', CONTACT_CHECK_CACHE_TTL: '7d', CONTACT_AVATAR_CACHE_TTL: '15m' });
    expect(config.contacts).toEqual({ checkRatePerMinute: 120, checkBurst: 20, checkCacheTtlMs: 7 * 86_400_000, avatarCacheTtlMs: 15 * 60_000 });
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

describe('lookup cache', () => {
  it('answers until the answer expires, per device and kind', () => {
    let now = 1_000_000;
    const db = openReadModelDb(tempDir('dmg-lookup-cache-'));
    const cache = new LookupCache(db, () => now);
    cache.put('d1', 'check', '4915112345678', { number: '4915112345678', exists: true }, 60_000);
    cache.put('d1', 'avatar', '4915112345678', { number: '4915112345678', url: null }, 1_000);
    expect(cache.get('d1', 'check', '4915112345678')).toEqual({ number: '4915112345678', exists: true });
    expect(cache.get('d1', 'avatar', '4915112345678')).toEqual({ number: '4915112345678', url: null });
    expect(cache.get('d2', 'check', '4915112345678')).toBeUndefined();
    now += 1_000;
    expect(cache.get('d1', 'avatar', '4915112345678')).toBeUndefined();
    expect(cache.get('d1', 'check', '4915112345678')).toEqual({ number: '4915112345678', exists: true });
    now += 59_000;
    expect(cache.get('d1', 'check', '4915112345678')).toBeUndefined();
    db.close();
  });

  it('keeps answers in the read-model database, across a reopen', () => {
    const dir = tempDir('dmg-lookup-cache-');
    const first = openReadModelDb(dir);
    new LookupCache(first).put('d1', 'check', '4915112345678', { number: '4915112345678', exists: false }, 60_000);
    first.close();
    const second = openReadModelDb(dir);
    expect(new LookupCache(second).get('d1', 'check', '4915112345678')).toEqual({ number: '4915112345678', exists: false });
    expect(second.prepare('SELECT count(*) AS n FROM contact_lookups').get()).toEqual({ n: 1 });
    second.close();
  });
});
