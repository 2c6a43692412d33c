import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** `dk_` + 192 random bits, base64url: shown once, stored only as its SHA-256. */
export const generateDeviceKey = (): string => `dk_${randomBytes(24).toString('base64url')}`;

/** `ak_` + 256 random bits, base64url. */
export const generateAdminKey = (): string => `ak_${randomBytes(32).toString('base64url')}`;

/** Hex SHA-256 of a key. Keys carry ≥128 random bits, so a fast unsalted hash is enough to store them. */
export const hashKey = (key: string): string => hash('sha256', key, 'hex');

/** Compares two hex SHA-256 hashes in constant time. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === 32 && right.length === 32 && timingSafeEqual(left, right);
}
