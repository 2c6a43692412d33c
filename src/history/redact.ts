/**
 * Keys whose values never leave the gateway through history views: key hashes, webhook secrets, engine
 * credentials and QR codes (a QR code is a credential while it is valid).
 */
const SECRET_KEYS =
  /^(keyHash|deviceKey|secret|secretKey|creds|credentials|keys|authState|token|password|qr|noiseKey|signedIdentityKey|signedPreKey|advSecretKey)$/i;

export const REDACTED = '[redacted]';

/** A deep copy of `value` with every secret-named property replaced by "[redacted]". */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) copy[key] = SECRET_KEYS.test(key) ? REDACTED : redactSecrets(inner);
  return copy;
}
