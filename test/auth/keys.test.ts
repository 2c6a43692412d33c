import { describe, expect, it } from 'vitest';
import { generateDeviceKey, hashKey, sameHash } from '../../src/auth/keys.js';

describe('key hashes', () => {
  it('match only the same hash, wherever two differ', () => {
    const key = generateDeviceKey();
    const hash = hashKey(key);
    expect(sameHash(hash, hashKey(key))).toBe(true);
    expect(sameHash(hash, hashKey(generateDeviceKey()))).toBe(false);
    for (const at of [0, 31, 63]) {
      const other = hash.slice(0, at) + (hash[at] === '0' ? '1' : '0') + hash.slice(at + 1);
      expect(sameHash(hash, other), `differs at ${at}`).toBe(false);
    }
  });

  it('refuse anything that is not a SHA-256 hex hash', () => {
    const hash = hashKey('dk_x');
    for (const other of ['', hash.slice(0, 63), `${hash}0`, 'not a hash']) {
      expect(sameHash(hash, other)).toBe(false);
      expect(sameHash(other, hash)).toBe(false);
    }
    expect(sameHash('', '')).toBe(false);
  });
});
