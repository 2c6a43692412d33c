/**
 * A hook's credentials at rest: its signing secret and, when its URL carries credentials, the URL itself.
 * With ENCRYPTION_KEY they are sealed (src/secrets/sealed-text.ts, the device id as associated data) before
 * they go into a HooksConfigured event, whose `url` is then masked, and opened only to sign and send. Values
 * written before the key was set, or without it, stay as they are (docs/operations.md, "Files and a full disk").
 */
import { SealedText, SealedTextUnreadableError } from '../secrets/sealed-text.js';
import { maskUrlCredentials } from '../secrets/url-credentials.js';

/** A sealed secret or URL and no ENCRYPTION_KEY (or another one) to open it. */
export class HookSecretUnreadableError extends SealedTextUnreadableError {
  override readonly name = 'HookSecretUnreadableError';
}

/** The URL of a HooksConfigured event: `url` as shown, `sealedUrl` the URL sent to when it differs. */
export interface StoredHookUrl {
  url: string;
  sealedUrl?: string;
}

export class HookSecrets {
  private readonly sealed: SealedText;

  constructor(encryptionKey: Uint8Array | undefined) {
    this.sealed = new SealedText(encryptionKey);
  }

  /** The secret as it is to be stored. */
  seal(deviceId: string, secret: string): string {
    return this.sealed.seal(secret, secretData(deviceId));
  }

  /** The secret as it is used. */
  open(deviceId: string, stored: string): string {
    return this.sealed.open(
      stored,
      secretData(deviceId),
      `the webhook secret of device ${deviceId}`,
      HookSecretUnreadableError,
    );
  }

  /**
   * The URL as it is to be stored: masked, with the URL itself sealed, when it carries credentials and
   * ENCRYPTION_KEY is set; as it is otherwise (answers mask it). Also for a URL recorded in clear before.
   */
  sealUrl(deviceId: string, url: string): StoredHookUrl {
    const masked = maskUrlCredentials(url);
    if (!this.sealed.sealing || masked === url) return { url };
    return { url: masked, sealedUrl: this.sealed.seal(url, urlData(deviceId)) };
  }

  /** The URL deliveries go to. */
  openUrl(deviceId: string, stored: StoredHookUrl): string {
    if (stored.sealedUrl === undefined) return stored.url;
    return this.sealed.open(
      stored.sealedUrl,
      urlData(deviceId),
      `the webhook URL of device ${deviceId}`,
      HookSecretUnreadableError,
    );
  }
}

const secretData = (deviceId: string) => `hook-secret:${deviceId}`;
const urlData = (deviceId: string) => `hook-url:${deviceId}`;
