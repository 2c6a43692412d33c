/**
 * The agent a device's WhatsApp connection goes through when its settings name a proxy: an HTTP(S)
 * CONNECT tunnel (https-proxy-agent, for `http://` and `https://` proxies) or SOCKS5 (socks-proxy-agent).
 * Both are TooTallNate's proxy-agents, the agents most Node HTTP and WebSocket clients use.
 */
import type { Agent } from 'node:https';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { dialUrlOf } from '../../settings/proxy-url.js';
import type { ProxySetting } from '../../settings/settings-events.js';

export function proxyAgentOf(proxy: ProxySetting): Agent {
  const url = dialUrlOf(proxy);
  // socks5h: the proxy resolves WhatsApp's host names, as a browser behind a SOCKS proxy does.
  // Both are agent-base agents: usable for http and https (and so ws and wss) destinations alike.
  if (url.startsWith('socks5:')) return new SocksProxyAgent(url.replace(/^socks5:/, 'socks5h:')) as unknown as Agent;
  return new HttpsProxyAgent(url) as unknown as Agent;
}
