/**
 * Keys whose values never leave the gateway through history views: key hashes, webhook secrets, engine
 * credentials (proxy credentials and sealed URLs included) and QR codes (a QR code is a credential while it
 * is valid). Every other string has the credentials of the URLs it holds masked (`***`): a webhook URL with
 * `user:password@` or `?token=` recorded in clear (without ENCRYPTION_KEY, or before it), a media URL.
 */
import { maskUrlsIn } from '../secrets/url-credentials.js';

const SECRET_KEYS =
  /^(keyHash|deviceKey|secret|secretKey|creds|credentials|sealedCredentials|sealedUrl|keys|authState|token|password|qr|noiseKey|signedIdentityKey|signedPreKey|advSecretKey)$/i;

export const REDACTED = '[redacted]';

/** A deep copy of `value` with every secret-named property replaced by "[redacted]" and URL credentials masked. */
export function redactSecrets(value: unknown): unknown {
  if (typeof value === 'string') return maskUrlsIn(value);
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) copy[key] = SECRET_KEYS.test(key) ? REDACTED : redactSecrets(inner);
  return copy;
}
