/**
 * A broker output's URL: its shape checked before anything is recorded (`amqp:`/`amqps:` for RabbitMQ,
 * `nats:`/`tls:` for NATS; a host; nothing a client cannot use), and its credentials kept at rest like the
 * other secrets: recorded as `url` with `***` for them, the URL itself under `sealedUrl`, sealed with
 * ENCRYPTION_KEY when it is set (src/secrets/sealed-text.ts, the output id as associated data), in clear
 * without it (as a hook's URL is); opened only to connect.
 */
import { SealedText, SealedTextUnreadableError } from '../secrets/sealed-text.js';
import { hasMaskedCredentials, maskUrlCredentials } from '../secrets/url-credentials.js';
import type { OutputConfig, OutputType } from './output-events.js';

export const OUTPUT_URL_MAX_LENGTH = 2048;

const PROTOCOLS: Record<OutputType, readonly string[]> = { amqp: ['amqp:', 'amqps:'], nats: ['nats:', 'tls:'] };

/** Why `url` cannot be an output of `type` (words for `body/url …`), undefined when it can. */
export function outputUrlRefusal(type: OutputType, url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  const protocols = PROTOCOLS[type];
  if (!protocols.includes(parsed.protocol))
    return `must use ${protocols.map((protocol) => `${protocol}//`).join(' or ')} for a ${type} output`;
  if (parsed.hostname === '') return 'must name a host';
  if (parsed.port !== '' && Number(parsed.port) === 0) return 'must name a port between 1 and 65535';
  if (parsed.hash !== '') return 'must not have a fragment';
  if (type === 'nats' && (parsed.pathname.replace(/^\/$/, '') !== '' || parsed.search !== ''))
    return 'must not have a path or query for a nats output';
  if (hasMaskedCredentials(url))
    return 'has credentials shown as *** (send the real ones, or the URL as answers show it)';
  return undefined;
}

/** A sealed URL and no ENCRYPTION_KEY (or another one) to open it. */
export class OutputUrlUnreadableError extends SealedTextUnreadableError {
  override readonly name = 'OutputUrlUnreadableError';
}

export class OutputUrls {
  private readonly sealed: SealedText;

  constructor(encryptionKey: Uint8Array | undefined) {
    this.sealed = new SealedText(encryptionKey);
  }

  /** The URL as it is recorded: `url` masked, and the URL itself under `sealedUrl` when it carries credentials. */
  seal(outputId: string, url: string): Pick<OutputConfig, 'url' | 'sealedUrl'> {
    const masked = maskUrlCredentials(url);
    return masked === url ? { url } : { url: masked, sealedUrl: this.sealed.seal(url, urlData(outputId)) };
  }

  /** The URL connected to. */
  open(outputId: string, recorded: Pick<OutputConfig, 'url' | 'sealedUrl'>): string {
    if (recorded.sealedUrl === undefined) return recorded.url;
    return this.sealed.open(
      recorded.sealedUrl,
      urlData(outputId),
      `the URL of output ${outputId}`,
      OutputUrlUnreadableError,
    );
  }
}

const urlData = (outputId: string) => `output-url:${outputId}`;
