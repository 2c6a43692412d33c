/**
 * Proxy URLs: which are accepted, how their credentials are kept apart and shown (`***`), and the URL an
 * agent dials (credentials put back).
 */
import { domainToASCII } from 'node:url';
import type { SealedText } from '../secrets/sealed-text.js';
import { PROXY_PROTOCOLS, type ProxyCredentials, type ProxySetting } from './settings-events.js';

const MASK = '***';

export type ProxyRefusal = string;

/**
 * The setting for a proxy URL, or why it is refused: another scheme, a path or query, no host or port.
 * `addressRefusal` judges the host (the outbound network guard: private addresses unless allowed).
 */
export function proxySettingOf(
  text: string,
  addressRefusal: (httpUrl: string) => string | undefined,
): ProxySetting | ProxyRefusal {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not an absolute URL';
  }
  if (!(PROXY_PROTOCOLS as readonly string[]).includes(url.protocol))
    return `uses ${url.protocol.replace(/:$/, '')}; only http, https and socks5 proxies are allowed`;
  if (!url.hostname) return 'names no host';
  if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash)
    return 'has a path, query or fragment; a proxy URL is scheme://[user:password@]host:port';
  // socks5 is not a special scheme: its host is kept as typed (percent-encoded, in its case). Store it as an
  // http(s) host is, which is also how the guard reads it: punycode, lower case, IPv4 in dotted form.
  if (!url.hostname.startsWith('[')) {
    const asciiHost = domainToASCII(url.hostname);
    if (!asciiHost) return 'names a host that is not a valid host name';
    url.hostname = asciiHost;
  }
  const refusal = addressRefusal(`http://${url.host}/`);
  if (refusal) return refusal;
  const username = safelyDecoded(url.username);
  const password = safelyDecoded(url.password);
  if (username === undefined || password === undefined) return 'has credentials that are not valid percent-encoding';
  // `***` is how answers show stored credentials, never real ones: recording it would replace them with the mask.
  if (username === MASK || password === MASK) {
    return 'has `***` credentials, the mask answers show in place of the stored ones: send the real credentials, or the proxy exactly as GET /settings shows it to keep the stored one';
  }
  url.username = '';
  url.password = '';
  const bare = url.toString().replace(/\/$/, '');
  if (!username && !password) return { url: bare };
  return { url: bare.replace('://', `://${MASK}:${MASK}@`), credentials: { username, password } };
}

/** The setting as it is recorded: credentials sealed when ENCRYPTION_KEY is set (`sealed.sealing`), in clear otherwise. */
export function sealedProxy(proxy: ProxySetting, deviceId: string, sealed: SealedText): ProxySetting {
  if (!proxy.credentials || !sealed.sealing) return proxy;
  const { credentials, ...rest } = proxy;
  return { ...rest, sealedCredentials: sealed.seal(JSON.stringify(credentials), credentialsData(deviceId)) };
}

/** The setting with its credentials in clear, as the engines dial it. */
export function openedProxy(proxy: ProxySetting, deviceId: string, sealed: SealedText): ProxySetting {
  if (proxy.sealedCredentials === undefined) return proxy;
  const { sealedCredentials, ...rest } = proxy;
  const text = sealed.open(sealedCredentials, credentialsData(deviceId), `the proxy credentials of device ${deviceId}`);
  return { ...rest, credentials: JSON.parse(text) as ProxyCredentials };
}

const credentialsData = (deviceId: string) => `proxy-credentials:${deviceId}`;

/** The URL an agent dials: credentials put back in place of `***`. */
export function dialUrlOf(proxy: ProxySetting): string {
  // Sealed credentials are opened by the settings read model before any engine sees them.
  if (proxy.sealedCredentials !== undefined && !proxy.credentials) throw new Error('the proxy credentials are sealed');
  if (!proxy.credentials) return proxy.url;
  const url = new URL(proxy.url.replace(`${MASK}:${MASK}@`, ''));
  url.username = encodeURIComponent(proxy.credentials.username);
  url.password = encodeURIComponent(proxy.credentials.password);
  return url.toString().replace(/\/$/, '');
}

/** Any proxy credentials in `text` (an error message, a log line) replaced by `***`. */
export function redactProxyCredentials(text: string): string {
  return text.replace(/\b(https?|socks5h?):\/\/[^\s/@]*@/gi, `$1://${MASK}:${MASK}@`);
}

function safelyDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
