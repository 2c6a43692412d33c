import { once } from 'node:events';
import { type Server, createServer, get } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundGuard, guardedLookup, isDestinationRefused } from '../../src/net/outbound-guard.js';
import { createOutboundHttp } from '../../src/net/outbound-http.js';

/** A resolver under the test's control: every name answers `addresses` (what a rebinding DNS server would hand out). */
function fixedLookup(addresses: string[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, entries);
    else callback(null, entries[0].address, entries[0].family);
  }) as LookupFunction;
}

async function listen(host: string): Promise<Server> {
  const server = createServer((_req, res) => res.end('ok'));
  server.listen(0, host);
  await once(server, 'listening');
  return server;
}

const port = (server: Server) => (server.address() as AddressInfo).port;

describe('outbound network guard', () => {
  let v4: Server;
  let v6: Server;
  let hits = 0;

  beforeAll(async () => {
    v4 = await listen('127.0.0.1');
    v6 = await listen('::1');
    for (const server of [v4, v6]) server.on('request', () => hits++);
  });
  afterAll(() => {
    v4.close();
    v6.close();
  });

  describe('judging a URL', () => {
    const guard = new OutboundGuard({ allowPrivateNetworks: false });
    const open = new OutboundGuard({ allowPrivateNetworks: true });

    it.each([
      ['http://127.0.0.1/', 'loopback'],
      ['http://127.8.9.10:8080/x', 'loopback'],
      ['http://10.0.0.1/', 'private'],
      ['http://172.16.5.4/', 'private'],
      ['http://192.168.1.1/', 'private'],
      ['http://169.254.169.254/latest/meta-data', 'linkLocal'],
      ['http://100.64.0.1/', 'carrierGradeNat'],
      ['http://0.0.0.0/', 'unspecified'],
      ['http://[::1]/', 'loopback'],
      ['http://[fd00:ec2::254]/', 'uniqueLocal'],
      ['http://[fe80::1]/', 'linkLocal'],
      ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'],
      ['http://[::ffff:10.0.0.1]/', 'IPv4-mapped private'],
      ['http://localhost:3000/', 'loopback name'],
      ['http://api.localhost/', 'loopback name'],
    ])('refuses %s (%s)', (url, kind) => {
      expect(guard.refusalOf(url)).toContain(kind);
      expect(() => guard.assertAllowed(url)).toThrow(/^destination refused/);
      expect(open.refusalOf(url)).toBeUndefined();
    });

    it('allows public addresses and leaves names to connect time', () => {
      for (const url of [
        'https://93.184.216.34/hook',
        'http://[2606:4700:4700::1111]/',
        'https://hooks.example.com/x',
      ]) {
        expect(guard.refusalOf(url)).toBeUndefined();
      }
    });

    it('allows only http and https, whatever the setting', () => {
      for (const g of [guard, open]) {
        expect(g.refusalOf('ftp://example.com/')).toMatch(/only http and https/);
        expect(g.refusalOf('file:///etc/passwd')).toMatch(/only http and https/);
        expect(g.refusalOf('not a url')).toBe('is not an absolute URL');
        expect(g.refusalOf('https://hooks.example.com:0/x')).toBe('names port 0, which nothing listens on');
        expect(g.refusalOf('https://hooks.example.com:00/x')).toBe('names port 0, which nothing listens on');
        expect(g.refusalOf('https://hooks.example.com:8443/x')).toBeUndefined();
      }
    });
  });

  describe('on the connection (the address actually dialled)', () => {
    const guard = new OutboundGuard({ allowPrivateNetworks: false });
    const http = createOutboundHttp(guard, { timeoutMs: 2_000 });
    afterAll(() => guard.destroy());

    async function refusal(url: string, options: { dnsLookup?: LookupFunction } = {}): Promise<unknown> {
      const error = await http.get(url, options as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, url).toBeDefined();
      return error;
    }

    it('refuses 127.0.0.1, 10.0.0.1, 169.254.169.254, [::1] and localhost', async () => {
      const before = hits;
      for (const url of [
        `http://127.0.0.1:${port(v4)}/`,
        'http://10.0.0.1/',
        'http://169.254.169.254/latest/meta-data',
        `http://[::1]:${port(v6)}/`,
        `http://localhost:${port(v4)}/`,
      ]) {
        expect(isDestinationRefused(await refusal(url)), url).toBe(true);
      }
      expect(hits).toBe(before);
    });

    it('refuses a name that resolves to a private address, judged on the resolution used to connect', async () => {
      const before = hits;
      // The URL itself passes (a name), so only the connect-time check stands between it and loopback.
      const url = `http://rebind.example:${port(v4)}/`;
      expect(guard.refusalOf(url)).toBeUndefined();
      expect(isDestinationRefused(await refusal(url, { dnsLookup: fixedLookup(['127.0.0.1']) }))).toBe(true);
      expect(isDestinationRefused(await refusal(url, { dnsLookup: fixedLookup(['169.254.169.254']) }))).toBe(true);
      // One public answer among them does not make a private one acceptable.
      expect(isDestinationRefused(await refusal(url, { dnsLookup: fixedLookup(['93.184.216.34', '127.0.0.1']) }))).toBe(
        true,
      );
      expect(isDestinationRefused(await refusal(url, { dnsLookup: fixedLookup(['::ffff:127.0.0.1']) }))).toBe(true);
      expect(hits).toBe(before);
    });

    it('guards plain node:http through the same agents (for media fetches)', async () => {
      const error = await new Promise<Error>((resolve) => {
        get(`http://127.0.0.1:${port(v4)}/`, { agent: guard.agents.http }, () => resolve(new Error('connected'))).on(
          'error',
          resolve,
        );
      });
      expect(isDestinationRefused(error)).toBe(true);
    });

    it('does not follow redirects', async () => {
      const open = new OutboundGuard({ allowPrivateNetworks: true });
      const client = createOutboundHttp(open, { timeoutMs: 2_000 });
      const redirecting = createServer((_req, res) =>
        res.writeHead(302, { location: 'http://169.254.169.254/' }).end(),
      );
      redirecting.listen(0, '127.0.0.1');
      await once(redirecting, 'listening');
      const response = await client.get(`http://127.0.0.1:${port(redirecting)}/`);
      expect(response.statusCode).toBe(302);
      redirecting.close();
      open.destroy();
    });
  });

  describe('the guarded lookup (for sockets the agents do not make: a device proxy)', () => {
    const resolved = (lookup: LookupFunction, all: boolean) =>
      new Promise<{ error: Error | null; address: unknown }>((resolve) =>
        lookup('proxy.example', { all }, (error, address) => resolve({ error, address })),
      );

    it('refuses a name when any address it resolves to is not public, without saying which', async () => {
      for (const addresses of [
        ['127.0.0.1'],
        ['10.1.2.3'],
        ['169.254.169.254'],
        ['93.184.216.34', '::1'],
        ['::ffff:127.0.0.1'],
        ['0.0.0.0'],
      ]) {
        for (const all of [true, false]) {
          const { error } = await resolved(guardedLookup({ allowPrivateNetworks: false }, fixedLookup(addresses)), all);
          expect(isDestinationRefused(error), addresses.join()).toBe(true);
          expect(error!.message).toBe('destination refused: proxy.example resolves to a non-public address');
        }
      }
    });

    it('hands public addresses on in the form asked for; private ones only when allowed, never 0.0.0.0', async () => {
      const publicOnes = fixedLookup(['93.184.216.34', '2606:4700:4700::1111']);
      expect(await resolved(guardedLookup({ allowPrivateNetworks: false }, publicOnes), false)).toEqual({
        error: null,
        address: '93.184.216.34',
      });
      expect((await resolved(guardedLookup({ allowPrivateNetworks: false }, publicOnes), true)).address).toEqual([
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ]);
      expect(await resolved(guardedLookup({ allowPrivateNetworks: true }, fixedLookup(['10.1.2.3'])), false)).toEqual({
        error: null,
        address: '10.1.2.3',
      });
      expect(
        isDestinationRefused(
          (await resolved(guardedLookup({ allowPrivateNetworks: true }, fixedLookup(['0.0.0.0'])), true)).error,
        ),
      ).toBe(true);
    });
  });

  describe('with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', () => {
    const guard = new OutboundGuard({ allowPrivateNetworks: true });
    const http = createOutboundHttp(guard, { timeoutMs: 300 });
    afterAll(() => guard.destroy());

    it('reaches 127.0.0.1, [::1], localhost and a name resolving to loopback', async () => {
      const urls: Array<[string, LookupFunction?]> = [
        [`http://127.0.0.1:${port(v4)}/`],
        [`http://[::1]:${port(v6)}/`],
        [`http://localhost:${port(v4)}/`],
        [`http://rebind.example:${port(v4)}/`, fixedLookup(['127.0.0.1'])],
      ];
      for (const [url, dnsLookup] of urls) {
        const response = await http.get(url, (dnsLookup ? { dnsLookup } : {}) as never);
        expect(response.statusCode, url).toBe(200);
      }
    });

    it('lets 10.0.0.1 and 169.254.169.254 through the guard (the network then answers or not)', async () => {
      for (const url of ['http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data']) {
        const outcome = await http.get(url).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isDestinationRefused(outcome), url).toBe(false);
      }
    });
  });
});
