import { hash, randomBytes } from 'node:crypto';

/** `dk_` + 192 random bits, base64url: shown once, stored only as its SHA-256. */
export const generateDeviceKey = (): string => `dk_${randomBytes(24).toString('base64url')}`;

/** `ak_` + 256 random bits, base64url. */
export const generateAdminKey = (): string => `ak_${randomBytes(32).toString('base64url')}`;

/** Hex SHA-256 of a key. Keys carry ≥128 random bits, so a fast unsalted hash is enough to store them. */
export const hashKey = (key: string): string => hash('sha256', key, 'hex');

/**
 * Compares two hex SHA-256 hashes in constant time (every character is looked at, wherever they differ).
 * On the strings themselves: turning both into buffers for timingSafeEqual cost more than the route.
 */
export function sameHash(a: string, b: string): boolean {
  if (a.length !== 64 || b.length !== 64) return false;
  let difference = 0;
  for (let i = 0; i < 64; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}
