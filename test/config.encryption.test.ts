import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('ENCRYPTION_KEY setting', () => {
  const base = { DATA_DIR: '/tmp/x' };

  it('is unset by default', () => {
    expect(loadConfig(base).encryptionKey).toBeUndefined();
  });

  it('accepts 32 bytes as 64 hex characters or as base64', () => {
    const key = randomBytes(32);
    expect(loadConfig({ ...base, ENCRYPTION_KEY: key.toString('hex') }).encryptionKey).toEqual(key);
    expect(loadConfig({ ...base, ENCRYPTION_KEY: key.toString('base64') }).encryptionKey).toEqual(key);
    expect(loadConfig({ ...base, ENCRYPTION_KEY: key.toString('base64url') }).encryptionKey).toEqual(key);
  });

  it.each([
    ['too short hex', 'abcdef0123'],
    ['31 bytes of base64', randomBytes(31).toString('base64')],
    ['33 bytes of base64', randomBytes(33).toString('base64')],
    ['a passphrase', 'correct horse battery staple'],
  ])('refuses %s with a ConfigError naming the variable, without echoing the value', (_label, value) => {
    let error: unknown;
    try {
      loadConfig({ ...base, ENCRYPTION_KEY: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ variable: 'ENCRYPTION_KEY' });
    expect((error as Error).message).toMatch(/^ENCRYPTION_KEY: must be 32 bytes/);
    expect((error as Error).message).not.toContain(value);
  });
});
