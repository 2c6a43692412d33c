/** The lookup cache's expiry and persistence. */
import { describe, expect, it } from 'vitest';
import { LookupCache } from '../../src/contacts/lookup-cache.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { tempDir } from '../support/temp-dir.js';

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
    expect(new LookupCache(second).get('d1', 'check', '4915112345678')).toEqual({
      number: '4915112345678',
      exists: false,
    });
    expect(second.prepare('SELECT count(*) AS n FROM contact_lookups').get()).toEqual({ n: 1 });
    second.close();
  });
});
