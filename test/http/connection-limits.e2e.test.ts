/**
 * One address must not be able to take the connections everybody else needs (issue 28, item 1). The
 * attacker connects from 127.0.0.2 and the normal client from 127.0.0.1 (Linux routes all of 127/8 to lo),
 * so the gateway sees two addresses. Before: 2,000 idle connections from one address reset 94 % of a normal
 * client's requests, and idle or slowloris sockets were dropped only after 20–50 s.
 */
import { once } from 'node:events';
import { type Socket, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CHILD_GATEWAY_TESTS, type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { type Flood, settled, startFlood } from '../support/connection-flood.js';
import { ADMIN_KEY, startTestGateway, tempDir } from '../support/gateway.js';
import { parseRaw, rawRequest } from '../support/raw-http.js';

/** `count` idle connections from `from`, each connected (or refused) before this resolves. */
async function holdIdle(port: number, count: number, from = '127.0.0.2'): Promise<Socket[]> {
  const sockets = Array.from({ length: count }, () => connect({ port, host: '127.0.0.1', localAddress: from }));
  for (const socket of sockets) socket.on('error', () => undefined);
  await Promise.all(sockets.map((socket) => settled(socket)));
  return sockets;
}

/** Resolves when the socket has closed, however (a reset is an 'error' first, which `once` would reject on). */
const closed = (socket: Socket) => new Promise((resolve) => socket.once('close', resolve));

/** `count` requests one after another, each on a fresh connection: statuses and milliseconds. */
async function normalClient(url: string, count: number): Promise<{ statuses: number[]; ms: number[] }> {
  const statuses: number[] = [];
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const answer =
      i % 2 === 0
        ? await rawRequest(url, 'GET', '/health', {})
        : await rawRequest(url, 'GET', '/devices', { 'x-admin-key': ADMIN_KEY });
    ms.push(performance.now() - started);
    statuses.push(answer.status);
  }
  return { statuses, ms };
}

const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1];

describe('connections from one address', CHILD_GATEWAY_TESTS, () => {
  let gateway: ChildGateway | undefined;
  let flood: Flood | undefined;
  afterEach(async () => {
    await flood?.stop();
    await gateway?.stop();
    flood = gateway = undefined;
  });

  it('2,000 idle and 1,000 slowloris connections from one address: a normal client from another is served, p99 ≤ 100 ms', async () => {
    gateway = await spawnGateway(tempDir());
    // The code paths warmed up, and the same client timed without an attack (told on failure: the machine is shared).
    const unloaded = await normalClient(gateway.url, 200);
    flood = await startFlood(Number(new URL(gateway.url).port), { idle: 2_000, slow: 1_000 });
    // 500 requests: the 99th percentile is the fifth slowest, not one stall of a busy machine.
    const { statuses, ms } = await normalClient(gateway.url, 500);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(p99(ms), `p99 without the attack: ${p99(unloaded.ms).toFixed(1)} ms`).toBeLessThanOrEqual(100);
    // What kept the attacker to its share: MAX_CONNECTIONS_PER_ADDRESS (512 by default).
    const metrics = await rawRequest(gateway.url, 'GET', '/metrics', { 'x-admin-key': ADMIN_KEY });
    const refused = /^dmg_http_connections_refused_total\{reason="per_address"\} (\d+)/m.exec(metrics.text);
    expect(Number(refused?.[1])).toBeGreaterThan(2_000);
  });
});

describe('connection limits in process', () => {
  it('at MAX_CONNECTIONS, the address holding the most gives one up for a client of another address', async () => {
    const gateway = await startTestGateway({ MAX_CONNECTIONS: '50', MAX_CONNECTIONS_PER_ADDRESS: '1000' });
    const held = await holdIdle(Number(new URL(gateway.url).port), 50);
    try {
      expect(held.every((socket) => !socket.destroyed)).toBe(true);
      const { statuses } = await normalClient(gateway.url, 20);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      // The first took one of the attacker's connections (closed with a reset); the others found that slot free.
      const metrics = await gateway.api('GET', '/metrics', { admin: true });
      expect(metrics.body).toMatch(/^dmg_http_connections_refused_total\{reason="shed"\} [1-9]/m);
      expect(held.filter((socket) => socket.destroyed).length).toBeGreaterThanOrEqual(1);
    } finally {
      for (const socket of held) socket.destroy();
      await gateway.close();
    }
  });

  it('at MAX_CONNECTIONS, a connection with a request in progress is never shed: the newcomer is refused', async () => {
    const gateway = await startTestGateway({ MAX_CONNECTIONS: '6', MAX_CONNECTIONS_PER_ADDRESS: '1000' });
    const port = Number(new URL(gateway.url).port);
    // Six requests in progress from one address: headers read, bodies still arriving. The server's
    // "100 Continue" says it has read a request's headers and taken the request.
    const busy: Socket[] = [];
    try {
      while (busy.length < 6) {
        const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
        busy.push(socket);
        socket.on('error', () => undefined);
        await once(socket, 'connect');
        socket.write(
          `POST /devices HTTP/1.1\r\nHost: x\r\nX-Admin-Key: ${ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`,
        );
        expect(String((await once(socket, 'data'))[0])).toContain('100 Continue');
        socket.write('{');
      }
      const newcomer = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' });
      newcomer.on('error', () => undefined);
      await closed(newcomer);
      expect(busy.filter((socket) => socket.destroyed)).toHaveLength(0);
    } finally {
      for (const socket of busy) socket.destroy();
      await gateway.close();
    }
  });

  it('addresses holding as many do not push each other out: the newcomer is refused', async () => {
    const gateway = await startTestGateway({ MAX_CONNECTIONS: '2' });
    const port = Number(new URL(gateway.url).port);
    const held = [
      connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' }),
      connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' }),
    ];
    try {
      await Promise.all(held.map((socket) => once(socket, 'connect')));
      const newcomer = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.4' });
      newcomer.on('error', () => undefined);
      await closed(newcomer);
      expect(held.every((socket) => !socket.destroyed)).toBe(true);
    } finally {
      for (const socket of held) socket.destroy();
      await gateway.close();
    }
  });

  it('cuts a connection that sends nothing within seconds, and answers a slowloris 408 within seconds', async () => {
    const gateway = await startTestGateway();
    const port = Number(new URL(gateway.url).port);
    try {
      const started = performance.now();
      const idle = connect({ port, host: '127.0.0.1' });
      const slow = connect({ port, host: '127.0.0.1' });
      const answer: Buffer[] = [];
      slow.on('data', (chunk: Buffer) => answer.push(chunk));
      slow.write('GET /health HTTP/1.1\r\nHost: x\r\n');
      const drip = setInterval(() => slow.writable && slow.write('X-Drip: 1\r\n'), 500);
      const [idleClosedAt, slowClosedAt] = await Promise.all(
        [idle, slow].map(async (socket) => {
          socket.on('error', () => undefined);
          await closed(socket);
          return performance.now() - started;
        }),
      );
      clearInterval(drip);
      // Was 20–50 s for both: Node's headersTimeout, looked at every 30 s.
      expect(idleClosedAt).toBeLessThan(8_000);
      expect(slowClosedAt).toBeLessThan(13_000);
      const parsed = parseRaw(Buffer.concat(answer).toString('latin1'));
      expect(parsed.status).toBe(408);
      expect(parsed.type).toContain('application/problem+json');
    } finally {
      await gateway.close();
    }
  });
});
