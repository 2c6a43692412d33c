/**
 * AES-256-GCM for secrets at rest (Baileys auth records, webhook signing secrets): a random 12-byte IV
 * per value, the 16-byte auth tag kept beside the ciphertext, and the value's name as additional
 * authenticated data, so a value copied under another name (another key, another device) fails to open
 * instead of being silently accepted.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export interface SealedValue {
  alg: 'aes-256-gcm';
  /** base64 of the 12-byte IV. */
  iv: string;
  /** base64 of the 16-byte authentication tag. */
  tag: string;
  /** base64 of the ciphertext. */
  data: string;
}

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/** A sealed value could not be opened: wrong key, or the record was altered. */
export class ValueDecryptionError extends Error {
  override readonly name = 'ValueDecryptionError';
}

export class ValueCipher {
  readonly #key: Buffer;
  /** A separate key (derived, so one secret still suffices) for blinding record names. */
  readonly #nameKey: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== KEY_BYTES) throw new RangeError(`an AES-256 key has ${KEY_BYTES} bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
    this.#nameKey = Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), 'baileys-auth record names', KEY_BYTES));
  }

  /**
   * A keyed digest of a name (base64url HMAC-SHA256): record names such as Signal session ids contain
   * contacts' phone numbers, which must not sit in the store in clear when values are encrypted.
   */
  blindName(name: string): string {
    return createHmac('sha256', this.#nameKey).update(name, 'utf8').digest('base64url');
  }

  seal(plaintext: string, associatedData: string): SealedValue {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return {
      alg: ALGORITHM,
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    };
  }

  open(sealed: SealedValue, associatedData: string): string {
    if (sealed.alg !== ALGORITHM) throw new ValueDecryptionError(`unknown cipher "${String(sealed.alg)}"`);
    const iv = Buffer.from(sealed.iv, 'base64');
    const tag = Buffer.from(sealed.tag, 'base64');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new ValueDecryptionError('malformed sealed value');
    try {
      const decipher = createDecipheriv(ALGORITHM, this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      // GCM reports a wrong key and tampered data the same way: the tag does not verify.
      throw new ValueDecryptionError('authentication failed (wrong ENCRYPTION_KEY, or the record was altered)');
    }
  }
}
