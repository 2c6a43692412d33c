/**
 * Which address a request comes from, for the limits kept per address. Behind a reverse proxy every socket
 * comes from the proxy, so for the proxies in TRUST_PROXY the client is read from X-Forwarded-For: from the
 * right, past the trusted hops (anything further left is what the client chose to send). A request from an
 * untrusted address is judged by its socket (docs/configuration.md, "HTTP limits").
 */
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export class TrustedProxies {
  private readonly ranges: Array<[Address, number]>;

  /** `entries`: addresses and CIDR ranges, as TRUST_PROXY lists them (checked by src/config.ts). */
  constructor(entries: readonly string[]) {
    this.ranges = entries.map((entry) => {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const address = ipaddr.parse(entry);
      return [address, address.kind() === 'ipv4' ? 32 : 128];
    });
  }

  /** Whether connections from this address are a trusted proxy's. */
  trusts(address: string | undefined): boolean {
    if (this.ranges.length === 0 || address === undefined) return false;
    const parsed = parseAddress(address);
    return parsed !== undefined && this.trustsParsed(parsed);
  }

  /**
   * The client of a request whose socket comes from `peer` with this X-Forwarded-For (Node joins repeated
   * headers with commas). A hop that is not an address (a proxy that forwards the client's header without
   * adding to it) ends the search at the nearest trusted hop: the limit then falls on that proxy.
   */
  clientOf(peer: string | undefined, forwardedFor: string | undefined): string {
    const socketAddress = normalize(peer);
    if (!forwardedFor || this.ranges.length === 0) return socketAddress;
    let client = parseAddress(socketAddress);
    if (client === undefined || !this.trustsParsed(client)) return socketAddress;
    const hops = forwardedFor.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseAddress(withoutPort(hops[i].trim()));
      if (hop === undefined) break;
      client = hop;
      if (!this.trustsParsed(hop)) break;
    }
    return client.toString();
  }

  private trustsParsed(address: Address): boolean {
    return this.ranges.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits));
  }
}

/** An address as one spelling: an IPv4-mapped IPv6 address (a dual-stack socket) is the IPv4 it carries. */
export function normalize(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  return parseAddress(address)?.toString() ?? address;
}

function parseAddress(value: string): Address | undefined {
  return ipaddr.isValid(value) ? ipaddr.process(value) : undefined;
}

/** `203.0.113.7:51234` and `[2001:db8::1]:51234`, as some proxies write hops: the address alone. */
function withoutPort(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (bracketed) return bracketed[1];
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return v4 ? v4[1] : hop;
}
