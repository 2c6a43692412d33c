/**
 * Webhook signing secrets at rest. With ENCRYPTION_KEY set, a secret is sealed (AES-256-GCM, the device
 * id as associated data) before it goes into a HooksConfigured event, so neither the log nor the read
 * models hold it in clear; it is opened only where it is used (signing, the hooks answer). Secrets written
 * before the key was set stay readable as they are. Without the key, secrets are stored as they are.
 */
import { type SealedValue, ValueCipher } from '../secrets/value-cipher.js';

const SEALED = 'sealed:v1:';

/** A sealed secret and no ENCRYPTION_KEY (or another one) to open it. */
export class HookSecretUnreadableError extends Error {
  override readonly name = 'HookSecretUnreadableError';
}

export class HookSecrets {
  private readonly cipher: ValueCipher | undefined;

  constructor(encryptionKey: Uint8Array | undefined) {
    this.cipher = encryptionKey ? new ValueCipher(encryptionKey) : undefined;
  }

  /** The secret as it is to be stored. */
  seal(deviceId: string, secret: string): string {
    if (!this.cipher) return secret;
    return (
      SEALED + Buffer.from(JSON.stringify(this.cipher.seal(secret, associatedData(deviceId)))).toString('base64url')
    );
  }

  /** The secret as it is used. */
  open(deviceId: string, stored: string): string {
    if (!stored.startsWith(SEALED)) return stored;
    if (!this.cipher)
      throw new HookSecretUnreadableError(
        `the webhook secret of device ${deviceId} is encrypted and ENCRYPTION_KEY is not set`,
      );
    try {
      const sealed = JSON.parse(Buffer.from(stored.slice(SEALED.length), 'base64url').toString('utf8')) as SealedValue;
      return this.cipher.open(sealed, associatedData(deviceId));
    } catch (error) {
      throw new HookSecretUnreadableError(
        `the webhook secret of device ${deviceId} cannot be opened with this ENCRYPTION_KEY (it was sealed with another one)`,
        {
          cause: error,
        },
      );
    }
  }
}

const associatedData = (deviceId: string) => `hook-secret:${deviceId}`;
