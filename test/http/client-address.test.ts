import { describe, expect, it } from 'vitest';
import { TrustedProxies } from '../../src/http/client-address.js';

describe('the client address behind trusted proxies', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '192.0.2.1', 'fd00::/8']);

  it('is the socket address when that is not a trusted proxy, whatever X-Forwarded-For says', () => {
    expect(proxies.clientOf('198.51.100.7', '203.0.113.1')).toBe('198.51.100.7');
    expect(new TrustedProxies([]).clientOf('10.1.1.1', '203.0.113.1')).toBe('10.1.1.1');
    expect(proxies.clientOf('10.1.1.1', '')).toBe('10.1.1.1');
  });

  it('is the right-most hop that is not a trusted proxy', () => {
    expect(proxies.clientOf('10.1.1.1', '1.1.1.1, 203.0.113.9, 192.0.2.1, 10.2.2.2')).toBe('203.0.113.9');
    expect(proxies.clientOf('::ffff:10.1.1.1', '203.0.113.9')).toBe('203.0.113.9');
    expect(proxies.clientOf('fd00::1', '2001:db8::5')).toBe('2001:db8::5');
  });

  it('reads hops written with a port', () => {
    expect(proxies.clientOf('10.1.1.1', '203.0.113.9:51234')).toBe('203.0.113.9');
    expect(proxies.clientOf('10.1.1.1', '[2001:db8::5]:443')).toBe('2001:db8::5');
  });

  it('stops at the nearest trusted hop when a hop is not an address, and takes the left-most when all are trusted', () => {
    expect(proxies.clientOf('10.1.1.1', 'unknown, 192.0.2.1')).toBe('192.0.2.1');
    expect(proxies.clientOf('10.1.1.1', 'garbage')).toBe('10.1.1.1');
    expect(proxies.clientOf('10.1.1.1', '10.3.3.3, 192.0.2.1')).toBe('10.3.3.3');
  });

  it('trusts the listed addresses and ranges only, IPv4-mapped addresses as the IPv4 they carry', () => {
    expect(proxies.trusts('10.255.0.1')).toBe(true);
    expect(proxies.trusts('::ffff:192.0.2.1')).toBe(true);
    expect(proxies.trusts('192.0.2.2')).toBe(false);
    expect(proxies.trusts('fd12::1')).toBe(true);
    expect(proxies.trusts('fe80::1')).toBe(false);
  });
});
