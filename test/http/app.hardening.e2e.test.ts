/**
 * What the attack audit broke at the HTTP edge, each pinned: undecodable Content-Encoding (was 500),
 * errors of Node's HTTP parser and a bad Expect (were bare status lines), send/link with port 99999,
 * config-time URL checks (::/96, trailing dots), refusals that named internal addresses, the connection
 * cap and the per-address limit of failed authentication.
 */
import { once } from 'node:events';
import { type Server, createServer, request } from 'node:http';
import { type AddressInfo, type LookupFunction, connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundGuard } from '../../src/net/outbound-guard.js';
import { WebhookSender } from '../../src/webhooks/webhook-sender.js';
import { eventually } from '../support/eventually.js';
import { ADMIN_KEY, startTestGateway } from '../support/gateway.js';
import { parseRaw, rawExchange, rawRequest } from '../support/raw-http.js';

describe('HTTP edge hardening', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let deviceKey: string;
  beforeAll(async () => {
    gateway = await startTestGateway({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    deviceKey = (
      await gateway.api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'S', engine: 'sandbox' } })
    ).body.deviceKey;
  });
  afterAll(() => gateway.close());

  describe('Content-Encoding', () => {
    const garbage = Buffer.from('this is not compressed at all');
    it.each([
      ['gzip', garbage],
      ['deflate', garbage],
      ['br', garbage],
      ['gzip', gzipSync('{"name":"x"}').subarray(0, 12)],
      ['deflate', deflateSync('{"name":"x"}').subarray(0, 5)],
    ])(
      '%s that does not decode is 400 problem+json, with or without a key, on every parser',
      async (encoding, body) => {
        for (const [path, headers] of [
          ['/devices', { 'x-admin-key': ADMIN_KEY }],
          ['/devices', {}],
          ['/devices/shop/send/image', { 'x-device-key': deviceKey }],
          ['/devices/shop/send/text', { 'x-device-key': deviceKey }],
        ] as const) {
          const answer = await rawRequest(
            gateway.url,
            'POST',
            path,
            { ...headers, 'content-type': 'application/json', 'content-encoding': encoding },
            body,
          );
          // Without a key: 401, the body unread (every route authenticates before it parses).
          expect(answer.status, `${encoding} ${path}`).toBe(
            'x-admin-key' in headers || 'x-device-key' in headers ? 400 : 401,
          );
          expect(answer.headers['content-type']).toContain('application/problem+json');
        }
      },
    );

    it('an unknown encoding is 415, a gzipped media body within the limits is accepted', async () => {
      const unknown = await rawRequest(
        gateway.url,
        'POST',
        '/devices/shop/send/image',
        { 'x-device-key': deviceKey, 'content-type': 'application/json', 'content-encoding': 'zstd-bomb' },
        Buffer.from('{}'),
      );
      expect(unknown.status).toBe(415);
      // On the plain JSON routes too, with a code that says what is wrong.
      for (const encoding of ['zstd', 'GZIP', 'gzip, gzip']) {
        const plain = await rawRequest(
          gateway.url,
          'POST',
          '/devices',
          { 'x-admin-key': ADMIN_KEY, 'content-type': 'application/json', 'content-encoding': encoding },
          Buffer.from('{}'),
        );
        expect(plain.status, encoding).toBe(415);
        expect(JSON.parse(plain.text)).toMatchObject({
          code: 'unsupported_media_type',
          detail: expect.stringContaining('Content-Encoding'),
        });
      }
      const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
      const body = gzipSync(JSON.stringify({ to: '4915112345678', base64: `data:image/png;base64,${png}` }));
      const ok = await rawRequest(
        gateway.url,
        'POST',
        '/devices/shop/send/image',
        { 'x-device-key': deviceKey, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body,
      );
      expect(ok.status).toBe(202);
    });
  });

  describe('errors of the HTTP parser answer problem+json', () => {
    const host = 'Host: 127.0.0.1\r\n';
    it.each([
      ['oversized headers', `GET /health HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
      [
        'a broken chunk',
        `POST /devices HTTP/1.1\r\n${host}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        400,
      ],
      [
        'Content-Length with Transfer-Encoding',
        `POST /devices HTTP/1.1\r\n${host}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        400,
      ],
      ['a NUL byte in a header', `GET /health HTTP/1.1\r\n${host}X-A: a\u0000b\r\n\r\n`, 400],
      ['garbage instead of a request line', '\u0016\u0003\u0001 not http at all\r\n\r\n', 400],
      [
        'an Expect other than 100-continue',
        `POST /devices HTTP/1.1\r\n${host}Expect: 200-ok\r\nContent-Length: 0\r\n\r\n`,
        417,
      ],
      ['CONNECT (this is not a proxy)', `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`, 405],
      ['HTTP/1.1 without a Host header', 'GET /health HTTP/1.1\r\n\r\n', 400],
    ])('%s → %s', async (_, request, status) => {
      const answer = parseRaw(await rawExchange(gateway.url, request));
      expect(answer.status).toBe(status);
      expect(answer.type).toContain('application/problem+json');
      expect(answer.body).toMatchObject({ status, code: expect.any(String) });
    });
  });

  it('send/link refuses a URL with port 99999', async () => {
    const answer = await gateway.api('POST', '/devices/shop/send/link', {
      deviceKey,
      json: { to: '4915112345678', url: 'https://example.com:99999/x' },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0].path).toBe('/url');
  });

  it('refuses ::/96 and trailing-dot names when a hook is set', async () => {
    for (const url of [
      'https://example.com:0/hook',
      'http://localhost./hook',
      'http://[::7f00:1]/hook',
      'http://[::a00:1]/hook',
      'http://[::]/hook',
      'http://example.com./hook',
    ]) {
      const answer = await gateway.api('PUT', '/devices/shop/hooks', {
        deviceKey,
        json: { url, events: ['message.received'] },
      });
      expect(answer.status, url).toBe(400);
      expect(answer.body.errors[0].path).toBe('/url');
    }
    const guard = new OutboundGuard({ allowPrivateNetworks: false });
    expect(guard.refusalOf('http://[::7f00:1]/')).toContain('IPv4-compatible');
    expect(guard.refusalOf('http://LOCALHOST./')).toContain('trailing dot');
    expect(guard.refusalOf('http://[2606:4700:4700::1111]/')).toBeUndefined();
  });
});

describe('refusals never name the internal address', () => {
  let receiver: Server;
  beforeAll(async () => {
    receiver = createServer((_req, res) => res.end('ok'));
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
  });
  afterAll(() => receiver.close());

  it('a webhook attempt to a name that resolves to loopback is "refused: private address"', async () => {
    const guard = new OutboundGuard({ allowPrivateNetworks: false });
    const rebinding: LookupFunction = ((
      _host: string,
      options: { all?: boolean },
      callback: (...args: unknown[]) => void,
    ) =>
      options.all
        ? callback(null, [{ address: '127.0.0.1', family: 4 }])
        : callback(null, '127.0.0.1', 4)) as LookupFunction;
    const sender = new WebhookSender(guard, 2_000, rebinding);
    const port = (receiver.address() as AddressInfo).port;
    const result = await sender.send(
      { url: `http://hooks.example:${port}/h`, secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` },
      { id: 'msg_1', payload: '{}' },
    );
    guard.destroy();
    expect(result.delivered).toBe(false);
    expect(result.error).toBe('refused: private address');
  });
});

describe('connection and authentication limits', () => {
  it('closes connections beyond MAX_CONNECTIONS', async () => {
    const gateway = await startTestGateway({ MAX_CONNECTIONS: '2' });
    const { port } = new URL(gateway.url);
    const held = [connect(Number(port), '127.0.0.1'), connect(Number(port), '127.0.0.1')];
    await Promise.all(held.map((s) => once(s, 'connect')));
    // Each held connection answers a request (and stays open): the server has taken both.
    for (const s of held) s.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await Promise.all(held.map((s) => once(s, 'data')));
    const third = await rawExchange(gateway.url, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(third).toBe('');
    for (const s of held) s.destroy();
    // Once the server has seen them close, a newcomer is taken again.
    await eventually(
      async () =>
        parseRaw(await rawExchange(gateway.url, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
          .status === 200,
      'a connection taken again',
    );
    await gateway.close();
  });

  it('answers 429 with Retry-After after UNAUTHENTICATED_RATE_PER_MINUTE failed authentications from one address', async () => {
    const gateway = await startTestGateway({ UNAUTHENTICATED_RATE_PER_MINUTE: '3' });
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push(
        (await gateway.api('GET', '/devices', { headers: { 'x-admin-key': `wrong-key-${i}-0123456789` } })).status,
      );
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const limited = await gateway.api('GET', '/devices', {});
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Until the minute is over, that address gets no route that takes a key without a known key; with one it
    // is served, and the public routes answer whatever.
    expect((await gateway.api('GET', '/health')).status).toBe(200);
    expect((await gateway.api('GET', '/devices', { admin: true })).status).toBe(200);
    await gateway.close();
  });

  it('counts unauthenticated requests with a malformed body: 401 before the body is parsed, then 429', async () => {
    const gateway = await startTestGateway({ UNAUTHENTICATED_RATE_PER_MINUTE: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push(
          (
            await rawRequest(
              gateway.url,
              'POST',
              '/devices',
              { 'content-type': 'application/json' },
              Buffer.from('{"name": '),
            )
          ).status,
        );
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      // With the key the same body is still malformed JSON.
      const malformed = await rawRequest(
        gateway.url,
        'POST',
        '/devices',
        { 'content-type': 'application/json', 'x-admin-key': ADMIN_KEY },
        Buffer.from('{"name": '),
      );
      expect(malformed.status).toBe(400);
      expect(JSON.parse(malformed.text).code).toBe('malformed_json');
    } finally {
      await gateway.close();
    }
  });

  it("limits a device-key holder guessing another device's key, and never the device's own routes", async () => {
    const gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', UNAUTHENTICATED_RATE_PER_MINUTE: '3' });
    try {
      const mine = (await gateway.api('POST', '/devices', { admin: true, json: { id: 'mine', name: 'M' } })).body
        .deviceKey;
      await gateway.api('POST', '/devices', { admin: true, json: { id: 'victim', name: 'V' } });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        // Its own valid key in X-Device-Key, a guess at the victim's as Bearer.
        const guess = { deviceKey: mine, headers: { authorization: `Bearer dk_guess_${i}_AAAAAAAAAAAAAAAAAAAAAAAA` } };
        statuses.push((await gateway.api('GET', '/devices/victim/session/state', guess)).status);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
      // The same address, blocked: its own routes still answer, with or without a body.
      expect((await gateway.api('GET', '/devices/mine/session/state', { deviceKey: mine })).status).toBe(200);
      expect(
        (await gateway.api('PATCH', '/devices/mine/settings', { deviceKey: mine, json: { rejectCalls: true } })).status,
      ).toBe(200);
      expect((await gateway.api('GET', '/devices', { admin: true })).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  it('limits a device-key holder guessing the admin key (403s count), not one that only uses its own key on an admin route', async () => {
    const gateway = await startTestGateway({ DEFAULT_ENGINE: 'sandbox', UNAUTHENTICATED_RATE_PER_MINUTE: '3' });
    try {
      const mine = (await gateway.api('POST', '/devices', { admin: true, json: { id: 'mine', name: 'M' } })).body
        .deviceKey;
      // A valid device key alone on an admin route guesses nothing: 403 every time, never counted.
      const honest: number[] = [];
      for (let i = 0; i < 5; i++) honest.push((await gateway.api('GET', '/devices', { deviceKey: mine })).status);
      expect(honest).toEqual([403, 403, 403, 403, 403]);
      const guessing: number[] = [];
      for (let i = 0; i < 5; i++)
        guessing.push(
          (
            await gateway.api('GET', '/devices', {
              deviceKey: mine,
              headers: { 'x-admin-key': `guess-${i}-0123456789abcdef` },
            })
          ).status,
        );
      expect(guessing).toEqual([403, 403, 403, 429, 429]);
      expect((await gateway.api('GET', '/devices/mine/session/state', { deviceKey: mine })).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});

describe('public routes and the client address behind a proxy', () => {
  it('after 200 bad keys from one address, /health, /openapi.json and /docs still answer 200; key routes are 429', async () => {
    const gateway = await startTestGateway();
    try {
      const statuses = new Set<number>();
      for (let i = 0; i < 200; i++)
        statuses.add(
          (await gateway.api('GET', '/devices', { headers: { 'x-admin-key': `wrong-key-${i}-0123456789` } })).status,
        );
      expect([...statuses].sort()).toEqual([401, 429]);
      for (const path of ['/health', '/openapi.json', '/docs'])
        expect((await gateway.api('GET', path)).status).toBe(200);
      expect((await gateway.api('GET', '/devices')).status).toBe(429);
      // A guess at the admin key on /health is a guess like any other.
      expect(
        (await gateway.api('GET', '/health', { headers: { 'x-admin-key': 'wrong-key-0123456789abcdef' } })).status,
      ).toBe(429);
      expect((await gateway.api('GET', '/health', { admin: true })).body.version).toEqual(expect.any(String));
    } finally {
      await gateway.close();
    }
  });

  it('TRUST_PROXY: behind a trusted proxy one client guessing keys does not limit another; X-Forwarded-For is read from the right', async () => {
    const gateway = await startTestGateway({ TRUST_PROXY: '127.0.0.1', UNAUTHENTICATED_RATE_PER_MINUTE: '3' });
    try {
      // The proxy (127.0.0.1) appends the address it saw; a client can only add hops to the left of it.
      const guess = (forwardedFor: string, i: number) =>
        statusFrom(gateway.url, '127.0.0.1', {
          'x-forwarded-for': forwardedFor,
          'x-admin-key': `guess-${i}-0123456789`,
        });
      const a: number[] = [];
      for (let i = 0; i < 5; i++) a.push(await guess(`198.51.100.${i}, 203.0.113.5`, i));
      expect(a).toEqual([401, 401, 401, 429, 429]);
      expect(await guess('203.0.113.6', 9)).toBe(401);
      // A hop list that ends in trusted proxies: the first untrusted one from the right is the client (A).
      expect(await guess('203.0.113.5, 127.0.0.1', 10)).toBe(429);
      // From an address that is not a trusted proxy, the header is not believed: its socket is the client.
      const direct: number[] = [];
      for (let i = 0; i < 4; i++)
        direct.push(
          await statusFrom(gateway.url, '127.0.0.2', {
            'x-forwarded-for': `203.0.113.${50 + i}`,
            'x-admin-key': `g-${i}-0123456789`,
          }),
        );
      expect(direct).toEqual([401, 401, 401, 429]);
    } finally {
      await gateway.close();
    }
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored', async () => {
    const gateway = await startTestGateway({ UNAUTHENTICATED_RATE_PER_MINUTE: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push(
          await statusFrom(gateway.url, '127.0.0.1', {
            'x-forwarded-for': `203.0.113.${i}`,
            'x-admin-key': `g-${i}-0123456789`,
          }),
        );
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await gateway.close();
    }
  });
});

/** The status of GET /devices sent from `localAddress` (any of 127/8 on Linux) with these headers. */
function statusFrom(url: string, localAddress: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/devices`, { localAddress, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('large media bodies are read a few at a time', () => {
  it('answers 503 server_busy with Retry-After when the queue is full, and takes bodies again once it is not', async () => {
    const gateway = await startTestGateway({ LARGE_BODY_CONCURRENCY: '1', LARGE_BODY_QUEUE: '0' });
    const key = (
      await gateway.api('POST', '/devices', { admin: true, json: { id: 'shop', name: 'S', engine: 'sandbox' } })
    ).body.deviceKey;
    const { port } = new URL(gateway.url);
    // A slow client: a 5 MB body announced, a few bytes sent, then nothing.
    const slowClient = async () => {
      const socket = connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.write(
        `POST /devices/shop/send/file HTTP/1.1\r\nHost: x\r\nX-Device-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${5 * 1024 * 1024}\r\n\r\n{"to":"4915112345678","filename":"a.bin","base64":"AAAA`,
      );
      const slowOne = { socket, answered: false };
      socket.once('data', () => (slowOne.answered = true));
      return slowOne;
    };
    let slow = await slowClient();
    const body = Buffer.from(
      JSON.stringify({ to: '4915112345678', filename: 'b.bin', base64: Buffer.alloc(1_200_000, 3).toString('base64') }),
    );
    const sendLarge = () =>
      rawRequest(
        gateway.url,
        'POST',
        '/devices/shop/send/file',
        { 'x-device-key': key, 'content-type': 'application/json' },
        body,
      );
    // Until the slow body holds the slot, a large body is read (202); once it does, the next is refused.
    const busy = await eventually(async () => {
      // A large body that took the slot before the slow one did had it refused: the slow client tries again.
      if (slow.answered) {
        slow.socket.destroy();
        slow = await slowClient();
      }
      const answer = await sendLarge();
      return answer.status === 503 && answer;
    }, 'a large body refused while the slow one holds the slot');
    expect(busy.status).toBe(503);
    expect(busy.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(busy.text).code).toBe('server_busy');
    expect(busy.headers['retry-after']).toBe('1');
    // Small bodies do not wait for the large ones.
    expect(
      (
        await gateway.api('POST', '/devices/shop/send/file', {
          deviceKey: key,
          json: { to: '4915112345678', filename: 'c.txt', base64: 'aGVsbG8=' },
        })
      ).status,
    ).toBe(202);
    slow.socket.destroy();
    // The slow body's slot is free once it is gone: a large body is read again.
    const after = await eventually(async () => {
      const answer = await sendLarge();
      return answer.status !== 503 && answer;
    }, 'a large body read once the slow one is gone');
    expect(after.status).toBe(202);
    await gateway.close();
  });

  it("gives one device at most half the slots: its next large body is 503, another device's is read", async () => {
    const gateway = await startTestGateway({ LARGE_BODY_CONCURRENCY: '2', LARGE_BODY_QUEUE: '0' });
    const keys: Record<string, string> = {};
    for (const id of ['greedy', 'other'])
      keys[id] = (
        await gateway.api('POST', '/devices', { admin: true, json: { id, name: id, engine: 'sandbox' } })
      ).body.deviceKey;
    const { port } = new URL(gateway.url);
    // The greedy device starts two 5 MB bodies and then sends nothing: the first to arrive holds a slot, the other is refused.
    const stalled = await Promise.all(
      [1, 2].map(async () => {
        const socket = connect(Number(port), '127.0.0.1');
        await once(socket, 'connect');
        socket.write(
          `POST /devices/greedy/send/file HTTP/1.1\r\nHost: x\r\nX-Device-Key: ${keys.greedy}\r\nContent-Type: application/json\r\nContent-Length: ${5 * 1024 * 1024}\r\n\r\n{"to":"4915112345678","filename":"a.bin","base64":"AAAA`,
        );
        return socket;
      }),
    );
    const refused = await Promise.race(
      stalled.map(async (socket) => ((await once(socket, 'data')) as [Buffer])[0].toString('latin1')),
    );
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused).toContain('"code":"server_busy"');
    expect(refused).toMatch(/retry-after: 1/i);
    // One slot is left, and it is not the greedy device's to take.
    const body = Buffer.from(
      JSON.stringify({ to: '4915112345678', filename: 'b.bin', base64: Buffer.alloc(1_200_000, 3).toString('base64') }),
    );
    expect(
      (
        await rawRequest(
          gateway.url,
          'POST',
          '/devices/other/send/file',
          { 'x-device-key': keys.other, 'content-type': 'application/json' },
          body,
        )
      ).status,
    ).toBe(202);
    for (const socket of stalled) socket.destroy();
    await gateway.close();
  });
});
