/**
 * What a device's traffic goes through when its settings name a proxy: its WhatsApp WebSocket through an
 * HTTP(S) CONNECT tunnel or SOCKS5 (TooTallNate's proxy-agents), its media downloads through undici's
 * ProxyAgent or Socks5ProxyAgent (Baileys downloads with fetch). The proxy's host passes the outbound network
 * guard where it is dialled, every resolved address on each connection: a check when the setting is saved
 * cannot see what a name resolves to.
 */
import type { Agent } from 'node:https';
import { isIP } from 'node:net';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { type Dispatcher, ProxyAgent, Socks5ProxyAgent, buildConnector } from 'undici';
import {
  DestinationRefusedError,
  type OutboundGuardOptions,
  addressRefusalOf,
  guardedLookup,
} from '../../net/outbound-guard.js';
import { dialUrlOf } from '../../settings/proxy-url.js';
import type { ProxySetting } from '../../settings/settings-events.js';

export function proxyAgentOf(proxy: ProxySetting, guard: OutboundGuardOptions): Agent {
  const url = dialUrlOf(proxy);
  assertLiteralHostAllowed(proxy, guard);
  const lookup = guardedLookup(guard);
  // socks5h: the proxy resolves WhatsApp's host names, as a browser behind a SOCKS proxy does.
  // Both are agent-base agents: usable for http and https (and so ws and wss) destinations alike.
  if (url.startsWith('socks5:'))
    return new SocksProxyAgent(url.replace(/^socks5:/, 'socks5h:'), { socketOptions: { lookup } });
  return new TunnelAgent(url, { lookup });
}

/** The dispatcher media downloads (fetch) go through. */
export function proxyDispatcherOf(proxy: ProxySetting, guard: OutboundGuardOptions): Dispatcher {
  const url = dialUrlOf(proxy);
  assertLiteralHostAllowed(proxy, guard);
  const lookup = guardedLookup(guard);
  return url.startsWith('socks5:')
    ? new Socks5ProxyAgent(url, { connect: buildConnector({ lookup }) })
    : new ProxyAgent({ uri: url, proxyTls: { lookup } });
}

/** net.connect does not look an IP literal up, so guardedLookup never sees it: judge it here. */
function assertLiteralHostAllowed(proxy: ProxySetting, guard: OutboundGuardOptions): void {
  const host = new URL(proxy.url).hostname.replace(/^\[(.*)\]$/, '$1');
  const refusal = isIP(host) ? addressRefusalOf(host, host, guard) : undefined;
  if (refusal) throw new DestinationRefusedError(`${refusal.message} (the proxy ${proxy.url})`);
}

/**
 * A CONNECT tunnel whose refusal is an error naming the status code only. https-proxy-agent would replay
 * the proxy's answer as the WebSocket's HTTP response, and its status text would reach the session's
 * lastError: the words of the proxy (or of whatever listens where it points) are not for the caller to read.
 */
class TunnelAgent extends HttpsProxyAgent<string> {
  override async connect(
    ...[req, opts]: Parameters<HttpsProxyAgent<string>['connect']>
  ): ReturnType<HttpsProxyAgent<string>['connect']> {
    let statusCode: number | undefined;
    const onAnswer = (answer: { statusCode: number }) => {
      statusCode = answer.statusCode;
    };
    req.once('proxyConnect', onAnswer);
    try {
      const socket = await super.connect(req, opts).catch((error: unknown) => {
        // Its parser quotes a malformed header line of the answer.
        throw /^Invalid header from proxy/.test((error as Error).message)
          ? new Error('the proxy answered CONNECT with a malformed header')
          : error;
      });
      if (statusCode === 200) return socket;
      socket.destroy();
      throw new Error(`the proxy refused the tunnel (HTTP ${statusCode ?? '?'})`);
    } finally {
      req.off('proxyConnect', onAnswer);
    }
  }
}
