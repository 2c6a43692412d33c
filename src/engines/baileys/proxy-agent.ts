/**
 * What a device's traffic goes through when its settings name a proxy:
 * - its WhatsApp connection (a WebSocket, node:http underneath): an HTTP(S) CONNECT tunnel
 *   (https-proxy-agent, for `http://` and `https://` proxies) or SOCKS5 (socks-proxy-agent), TooTallNate's
 *   proxy-agents, the agents most Node HTTP and WebSocket clients use;
 * - its media downloads (Baileys downloads with fetch, which takes an undici dispatcher): undici's
 *   ProxyAgent, or its Socks5ProxyAgent.
 */
import type { Agent } from 'node:https';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { type Dispatcher, ProxyAgent, Socks5ProxyAgent } from 'undici';
import { dialUrlOf } from '../../settings/proxy-url.js';
import type { ProxySetting } from '../../settings/settings-events.js';

export function proxyAgentOf(proxy: ProxySetting): Agent {
  const url = dialUrlOf(proxy);
  // socks5h: the proxy resolves WhatsApp's host names, as a browser behind a SOCKS proxy does.
  // Both are agent-base agents: usable for http and https (and so ws and wss) destinations alike.
  if (url.startsWith('socks5:')) return new SocksProxyAgent(url.replace(/^socks5:/, 'socks5h:')) as unknown as Agent;
  return new HttpsProxyAgent(url) as unknown as Agent;
}

/** The dispatcher media downloads (fetch) go through. */
export function proxyDispatcherOf(proxy: ProxySetting): Dispatcher {
  const url = dialUrlOf(proxy);
  return url.startsWith('socks5:') ? new Socks5ProxyAgent(url) : new ProxyAgent(url);
}
