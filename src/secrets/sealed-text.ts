/**
 * Text sealed for the log and the read models: with ENCRYPTION_KEY, a credential is stored as
 * `sealed:v1:` + base64url of its SealedValue (AES-256-GCM, value-cipher.ts), bound by its associated data
 * to what it is (`hook-url:<deviceId>`…), and opened only where it is used. Without the key nothing is sealed.
 */
import { type SealedValue, ValueCipher } from './value-cipher.js';

const SEALED = 'sealed:v1:';

/** A sealed text and no ENCRYPTION_KEY (or another one) to open it. `subject` names it in the message. */
export class SealedTextUnreadableError extends Error {
  override readonly name: string = 'SealedTextUnreadableError';
}

export class SealedText {
  private readonly cipher: ValueCipher | undefined;

  constructor(encryptionKey: Uint8Array | undefined) {
    this.cipher = encryptionKey ? new ValueCipher(encryptionKey) : undefined;
  }

  /** Whether texts are sealed (ENCRYPTION_KEY is set). */
  get sealing(): boolean {
    return this.cipher !== undefined;
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(SEALED);
  }

  /** The text sealed; as it is without ENCRYPTION_KEY. */
  seal(text: string, associatedData: string): string {
    if (!this.cipher) return text;
    return SEALED + Buffer.from(JSON.stringify(this.cipher.seal(text, associatedData))).toString('base64url');
  }

  /**
   * The text a sealed one holds (an unsealed one as it is). `subject` (e.g. "the webhook URL of device d1")
   * names it when it cannot be opened; `unreadable` makes the error the caller's kind.
   */
  open(
    stored: string,
    associatedData: string,
    subject: string,
    unreadable: new (message: string, options?: ErrorOptions) => Error = SealedTextUnreadableError,
  ): string {
    if (!SealedText.isSealed(stored)) return stored;
    if (!this.cipher) throw new unreadable(`${subject} is encrypted and ENCRYPTION_KEY is not set`);
    try {
      const sealed = JSON.parse(Buffer.from(stored.slice(SEALED.length), 'base64url').toString('utf8')) as SealedValue;
      return this.cipher.open(sealed, associatedData);
    } catch (error) {
      throw new unreadable(`${subject} cannot be opened with this ENCRYPTION_KEY (it was sealed with another one)`, {
        cause: error,
      });
    }
  }
}
