/**
 * The outbound network guard: the gateway dials only public unicast addresses over http/https, unless
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true; shared by webhook deliveries and media URLs. request-filtering-agent
 * enforces it at connect time (it checks the address its own DNS lookup dials, so no DNS-rebinding window;
 * anything not ipaddr.js's `unicast` is refused, cloud metadata's link-local included), and ipaddr.js names
 * a literal address's range so that a URL that can only point inside is refused early with a clear reason.
 */
import { lookup as dnsLookup } from 'node:dns';
import { type LookupFunction, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

export const ALLOWED_PROTOCOLS: ReadonlySet<string> = new Set(['http:', 'https:']);

export interface OutboundGuardOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: lift the address rule (the protocol rule stays). */
  allowPrivateNetworks: boolean;
}

export interface GuardedAgents {
  http: RequestFilteringHttpAgent;
  https: RequestFilteringHttpsAgent;
}

/** A destination the guard will not dial; `reason` is safe to show to the device's owner. */
export class DestinationRefusedError extends Error {
  override readonly name = 'DestinationRefusedError';
  readonly code = 'destination_refused';
}

/** How request-filtering-agent words its refusals (pinned by test/net/outbound-guard.test.ts). */
const AGENT_REFUSAL = /is not allowed\. Because/;

export class OutboundGuard {
  readonly allowPrivateNetworks: boolean;
  /** Keep-alive agents for got (`agent: guard.agents`) or node:http; every new connection is checked. */
  readonly agents: GuardedAgents;

  constructor(options: OutboundGuardOptions) {
    this.allowPrivateNetworks = options.allowPrivateNetworks;
    const agentOptions = {
      keepAlive: true,
      scheduling: 'lifo' as const,
      allowPrivateIPAddress: options.allowPrivateNetworks,
    };
    this.agents = {
      http: new RequestFilteringHttpAgent(agentOptions),
      https: new RequestFilteringHttpsAgent(agentOptions),
    };
  }

  /**
   * Why this URL must not be dialled, judged from the URL alone: a protocol other than http/https, or a
   * host that is a non-public IP literal or a `localhost` name. Undefined when it may be tried; host names
   * are then judged again on every connection, on the addresses they resolve to.
   */
  refusalOf(url: string | URL): string | undefined {
    let parsed: URL;
    try {
      parsed = typeof url === 'string' ? new URL(url) : url;
    } catch {
      return 'is not an absolute URL';
    }
    if (!ALLOWED_PROTOCOLS.has(parsed.protocol))
      return `uses ${parsed.protocol.replace(/:$/, '')}; only http and https are allowed`;
    // Port 0 cannot be dialled: every attempt would fail, as the hook's test already would.
    if (parsed.port === '0') return 'names port 0, which nothing listens on';
    if (this.allowPrivateNetworks) return undefined;
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    // A fully qualified name ("localhost.", "intranet.corp.") escapes suffix rules and search domains alike.
    if (host.endsWith('.')) return `names ${host}, a fully qualified name with a trailing dot; leave the dot out`;
    if (host === 'localhost' || host.endsWith('.localhost')) return `points to ${host}, a loopback name`;
    const range = isIP(host) ? addressRange(host) : undefined;
    return range && range !== 'unicast' ? `points to ${host}, in the ${range} range` : undefined;
  }

  /** Throws DestinationRefusedError when refusalOf() has a reason. */
  assertAllowed(url: string | URL): void {
    const reason = this.refusalOf(url);
    if (reason) throw new DestinationRefusedError(`destination refused: the URL ${reason}`);
  }

  /** Destroys idle keep-alive sockets (at shutdown). */
  destroy(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/** ipaddr.js's name for the range of an IP literal; IPv4-mapped IPv6 is judged as the IPv4 it carries. */
export function addressRange(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    return `IPv4-mapped ${(parsed as ipaddr.IPv6).toIPv4Address().range()}`;
  }
  const range = parsed.range();
  // ::/96 (IPv4-compatible, deprecated): ipaddr.js calls it unicast, yet ::7f00:1 is 127.0.0.1 to some stacks.
  if (
    range === 'unicast' &&
    parsed.kind() === 'ipv6' &&
    (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)
  )
    return 'IPv4-compatible';
  return range;
}

/**
 * The agents' address rule, for a host the guard's agents do not dial (a device's proxy, dialled by the
 * proxy agents): a non-public address is refused unless private networks are allowed, an unspecified one
 * (0.0.0.0, ::) always, as request-filtering-agent does. `host` is what the URL named (an IP or a name).
 */
export function addressRefusalOf(
  host: string,
  address: string,
  options: OutboundGuardOptions,
): DestinationRefusedError | undefined {
  let range: string;
  try {
    range = addressRange(address);
  } catch {
    range = 'unparsable';
  }
  if (range === 'unicast' || (options.allowPrivateNetworks && range !== 'unspecified' && range !== 'unparsable'))
    return undefined;
  // Never which address a name resolved to: that would tell the inside.
  return new DestinationRefusedError(
    `destination refused: ${host} ${host === address ? 'is' : 'resolves to'} a non-public address`,
  );
}

/**
 * A `lookup` for net/tls.connect that judges every address a name resolves to (addressRefusalOf) before one
 * is dialled, as request-filtering-agent's agents do for theirs: the address checked is the address dialled.
 * IP literals are never looked up by net.connect: judge them with addressRefusalOf before connecting.
 * `resolve` is the lookup wrapped (default: dns.lookup).
 */
export function guardedLookup(options: OutboundGuardOptions, resolve: LookupFunction = dnsLookup): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (error, resolved) => {
      if (error) return callback(error, '', 0);
      const addresses = typeof resolved === 'string' ? [{ address: resolved, family: isIP(resolved) }] : resolved;
      // One public answer among them does not make a private one acceptable.
      for (const { address } of addresses) {
        const refusal = addressRefusalOf(hostname, address, options);
        if (refusal) return callback(refusal, '', 0);
      }
      if (lookupOptions.all) return callback(null, addresses);
      const [first] = addresses;
      return first
        ? callback(null, first.address, first.family)
        : callback(Object.assign(new Error(`${hostname} resolved to no address`), { code: 'ENOTFOUND' }), '', 0);
    });
  };
}

/** What the guard says when it refused a destination: never which address, so that nothing about the inside leaks. */
export const PRIVATE_ADDRESS_REFUSAL = 'refused: private address';

/**
 * True when `error` (or its cause, as got wraps socket errors) is the guard refusing a connection:
 * either the agent's connect-time check or assertAllowed().
 */
export function isDestinationRefused(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof DestinationRefusedError || AGENT_REFUSAL.test(current.message)) return true;
  }
  return false;
}
