/**
 * The BodyGate as the media body parser uses it, on a small Koa app (the gateway builds its gate from the
 * config; here the idle timeout and the per-device share are set directly, so the tests stay short):
 * a request whose client leaves while it waits is dropped, a body that stalls or trickles in is answered 408
 * and frees its slot, and devices share the slots fairly.
 */
import { once } from 'node:events';
import { readdirSync, watch } from 'node:fs';
import type { Server } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import Koa from 'koa';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { BodyGate, type BodyGateSettings } from '../../../src/http/body/body-gate.js';
import { mediaBodyParser } from '../../../src/http/body/media-body-parser.js';
import { problemResponses } from '../../../src/http/middleware/problem-responses.js';
import { FileBody } from '../../../src/http/schemas/send.js';
import { eventually } from '../../support/eventually.js';
import { TestClock } from '../../support/test-clock.js';
import { tempDir } from '../../support/temp-dir.js';

const TO = '4915112345678';
/** Far longer than any test: only the fix under test can end a read. */
const NEVER = 60_000;

interface GateApp {
  gate: BodyGate;
  uploadDir: string;
  port: number;
  /** The bytes the server has received on its connections, all together. */
  received: () => number;
}

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** The parser on `/<deviceId>` (the device id as the router's params would give it); a body read is 202. */
async function gateApp(settings: BodyGateSettings): Promise<GateApp> {
  const gate = new BodyGate(settings);
  const uploadDir = tempDir('dmg-gate-');
  const parse = mediaBodyParser({ kind: 'file', limit: 4 * 1024 * 1024, uploadDir, schema: FileBody, gate });
  const app = new Koa();
  app.silent = true;
  app.use(problemResponses());
  app.use(async (ctx) => {
    (ctx as { params?: Record<string, string> }).params = { deviceId: ctx.path.slice(1) };
    await parse(ctx, async () => {
      ctx.status = 202;
      ctx.body = { read: true };
    });
  });
  server = app.listen(0, '127.0.0.1');
  const connections: Socket[] = [];
  server.on('connection', (socket: Socket) => connections.push(socket));
  await once(server, 'listening');
  const received = () => connections.reduce((bytes, socket) => bytes + socket.bytesRead, 0);
  return { gate, uploadDir, port: (server.address() as AddressInfo).port, received };
}

type Start = 'json' | 'big-json' | 'multipart';

/**
 * A client that starts a large (chunked, so gated) body and then sends nothing more; `answer` is all it got
 * once closed. `big-json` sends enough for the JSON reader to write its spool file (and for the server to stop
 * reading the socket while the request waits).
 */
async function stalledClient(
  port: number,
  device: string,
  start: Start = 'json',
): Promise<{ socket: Socket; head: Promise<string>; answer: Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  const head = new Promise<string>((resolve) =>
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))),
  );
  const answer = new Promise<string>((resolve) =>
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1'))),
  );
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const body = {
    json: `{"to":"${TO}","filename":"a.bin","base64":"AAAA`,
    // Over the JSON reader's write batch (512 KiB decoded).
    'big-json': `{"to":"${TO}","filename":"a.bin","base64":"${'A'.repeat(800_000)}`,
    multipart: `--B\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\nhello`,
  }[start];
  const type = start === 'multipart' ? 'multipart/form-data; boundary=B' : 'application/json';
  socket.write(
    `POST /${device} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n`,
  );
  return { socket, head, answer };
}

/** A whole large body, sent chunked (a stream body): the gated path. */
function send(port: number, device: string, bytes = 5): Promise<number | string> {
  const base64 = Buffer.alloc(bytes, 7).toString('base64');
  return fetch(`http://127.0.0.1:${port}/${device}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: new Blob([JSON.stringify({ to: TO, filename: 'b.bin', base64 })]).stream(),
    duplex: 'half',
    signal: AbortSignal.timeout(5_000),
  }).then(
    (response) => response.status,
    (error: Error) => error.name,
  );
}

const loadIs = (gate: BodyGate, reading: number, waiting: number) => () =>
  gate.load.reading === reading && gate.load.waiting === waiting;
const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);

describe('the body gate and requests whose client is gone', () => {
  it('drops a queued read whose client left, so that it never takes a slot', async () => {
    const { gate, port } = await gateApp({ concurrency: 1, queue: 1, idleTimeoutMs: NEVER });
    const reader = await stalledClient(port, 'a');
    await eventually(loadIs(gate, 1, 0), 'the first body being read', 5_000);
    const queued = await stalledClient(port, 'b');
    await eventually(loadIs(gate, 1, 1), 'the second body waiting', 5_000);
    queued.socket.destroy();
    await eventually(loadIs(gate, 1, 0), 'the abandoned body leaving the queue', 5_000);
    reader.socket.destroy();
    await eventually(loadIs(gate, 0, 0), 'the gate empty once its reader left', 5_000);
    expect(await send(port, 'c')).toBe(202);
  });

  it('ends, once its turn comes, a queued read whose client left unseen (its socket was not being read)', async () => {
    const { gate, port } = await gateApp({ concurrency: 1, queue: 1, idleTimeoutMs: NEVER });
    const reader = await stalledClient(port, 'a');
    await eventually(loadIs(gate, 1, 0), 'the first body being read', 5_000);
    // Enough bytes that the server stops reading the waiting request's socket: its leaving is seen only once read.
    const queued = await stalledClient(port, 'b', 'big-json');
    await eventually(loadIs(gate, 1, 1), 'the second body waiting', 5_000);
    queued.socket.destroy();
    reader.socket.destroy();
    await eventually(loadIs(gate, 0, 0), 'the gate empty', 5_000);
    expect(await send(port, 'c')).toBe(202);
  });

  it('ends a read whose client leaves while it is read (its slot is free at once)', async () => {
    const { gate, port } = await gateApp({ concurrency: 1, queue: 0, idleTimeoutMs: NEVER });
    const reader = await stalledClient(port, 'a', 'multipart');
    await eventually(loadIs(gate, 1, 0), 'the body being read', 5_000);
    reader.socket.destroy();
    await eventually(loadIs(gate, 0, 0), 'the slot free', 5_000);
    expect(await send(port, 'b')).toBe(202);
  });
});

describe('the body gate and stalled bodies', () => {
  /**
   * The idle timeout on the test's clock: moved on, not waited for (and far longer than a test runs, so that no
   * real timer can end a read). The rate floor is off: only the idle timeout ends a read.
   */
  const IDLE = 20_000;
  const STEP = IDLE / 20;
  const settings = (clock: TestClock) => ({
    concurrency: 1,
    queue: 0,
    idleTimeoutMs: IDLE,
    minBytesPerSecond: 0,
    clock,
  });

  /**
   * Moves `clock` on a step at a time until the gate's slot is free; the time that took. A step waits for what the
   * last one started: while the server's reader is behind (writing to disk), the client is not idle.
   */
  async function advanceUntilFree(clock: TestClock, gate: BodyGate): Promise<number> {
    const began = clock.now();
    const free = async () => {
      if (gate.load.reading === 0) return true;
      await clock.advance(STEP);
      return false;
    };
    await eventually(free, 'the read cut', 10_000);
    return clock.now() - began;
  }

  /** Writes a chunk of the body and waits for the server to have it. */
  async function trickle(socket: Socket, received: () => number): Promise<void> {
    const before = received();
    socket.write('4\r\nAAAA\r\n');
    await eventually(() => received() >= before + 9, 'the bytes at the server', 5_000);
  }

  it.each([
    ['a JSON body', 'big-json'],
    ['a multipart body', 'multipart'],
  ] as const)(
    'answers %s that sends nothing for the idle timeout 408, frees its slot and removes its file',
    async (_name, start) => {
      const clock = new TestClock();
      const { gate, port, uploadDir } = await gateApp(settings(clock));
      const created = new Set<string>();
      const watcher = watch(uploadDir, (_event, name) => name && created.add(name));
      onTestFinished(() => watcher.close());
      const slow = await stalledClient(port, 'slow', start);
      await eventually(loadIs(gate, 1, 0), 'the body being read', 5_000);
      expect(await advanceUntilFree(clock, gate)).toBeGreaterThanOrEqual(IDLE);
      // The server closes the connection after its answer.
      const answer = await slow.answer;
      expect(statusOf(answer), answer).toBe(408);
      expect(answer).toMatch(/content-type: application\/problem\+json/i);
      expect(answer).toMatch(/connection: close/i);
      expect(answer).toContain('"code":"request_timeout"');
      expect(answer).toContain('no bytes of the request body arrived');
      expect(gate.load).toEqual({ reading: 0, waiting: 0 });
      await eventually(() => created.size > 0, 'the file the body was read into', 5_000);
      await eventually(() => readdirSync(uploadDir).length === 0, 'that file removed', 5_000);
      expect(await send(port, 'other')).toBe(202);
    },
  );

  it('cuts a body the idle timeout after its last bytes, not before (a slow loris)', async () => {
    const clock = new TestClock();
    const { gate, port, received } = await gateApp(settings(clock));
    const client = await stalledClient(port, 'a');
    await eventually(loadIs(gate, 1, 0), 'the body being read', 5_000);
    // Bytes for longer than the idle timeout, then none.
    for (let i = 0; i < 3; i++) {
      await trickle(client.socket, received);
      await clock.advance(IDLE / 2);
    }
    await trickle(client.socket, received);
    await clock.advance(IDLE - 1);
    expect(gate.load).toEqual({ reading: 1, waiting: 0 });
    // Seen within an eighth of the timeout of its due time.
    expect(await advanceUntilFree(clock, gate)).toBeLessThanOrEqual(IDLE / 8 + STEP);
    const answer = await client.answer;
    expect(statusOf(answer), answer).toBe(408);
    expect(answer).toContain(`no bytes of the request body arrived for ${IDLE / 1000} s`);
  });

  it('does not time out a body that keeps coming, however slowly', async () => {
    const clock = new TestClock();
    const { gate, port, received } = await gateApp(settings(clock));
    const client = await stalledClient(port, 'a');
    await eventually(loadIs(gate, 1, 0), 'the body being read', 5_000);
    // Some bytes every tenth of the idle timeout for several idle timeouts, then the end of the body.
    for (let i = 0; i < 40; i++) {
      await trickle(client.socket, received);
      await clock.advance(IDLE / 10);
    }
    expect(gate.load).toEqual({ reading: 1, waiting: 0 });
    client.socket.write(`2\r\n"}\r\n0\r\n\r\n`);
    expect(statusOf(await client.head)).toBe(202);
  });
});

describe('the body gate shared between devices', () => {
  it('gives one device at most its share of the slots: more are 503 for it, not for the others', async () => {
    const { gate, port } = await gateApp({ concurrency: 2, queue: 0, idleTimeoutMs: NEVER });
    expect(gate.perDevice).toBe(1);
    await stalledClient(port, 'greedy');
    await eventually(loadIs(gate, 1, 0), 'the first body being read', 5_000);
    const second = await stalledClient(port, 'greedy');
    const refused = await second.head;
    expect(statusOf(refused), refused).toBe(503);
    expect(refused).toContain('"code":"server_busy"');
    expect(refused).toMatch(/retry-after: 1/i);
    expect(await send(port, 'other')).toBe(202);
  });

  it('defaults the share to a quarter of the slots, at least one', () => {
    expect(new BodyGate({ concurrency: 16, queue: 32 }).perDevice).toBe(4);
    expect(new BodyGate({ concurrency: 3, queue: 0 }).perDevice).toBe(1);
    expect(new BodyGate({ concurrency: 1, queue: 0 }).perDevice).toBe(1);
  });

  it("slow bodies from two devices do not delay a third device's 2 MiB media send beyond 2 s", async () => {
    // The gateway's defaults (LARGE_BODY_CONCURRENCY 16, LARGE_BODY_QUEUE 32); no timeout ends the slow ones here.
    const { gate, port } = await gateApp({ concurrency: 16, queue: 32, idleTimeoutMs: NEVER, rateGraceMs: NEVER });
    for (const device of ['slow-a', 'slow-b']) for (let i = 0; i < 8; i++) await stalledClient(port, device);
    await eventually(
      () => gate.load.reading + gate.load.waiting === 16,
      'the slow bodies in the gate (read, or waiting their turn)',
      5_000,
    );
    const started = Date.now();
    const status = await send(port, 'third', 2 * 1024 * 1024);
    const tookMs = Date.now() - started;
    expect(status).toBe(202);
    expect(tookMs).toBeLessThan(2_000);
    // Each slow device has its share read and as many waiting.
    expect(gate.load).toEqual({ reading: 8, waiting: 8 });
    // A ninth slow body of one of them is refused, not queued behind the others' turns.
    const ninth = await stalledClient(port, 'slow-a');
    expect(statusOf(await ninth.head)).toBe(503);
  });

  it('gives freed slots to the waiting devices in turn, each in its own order', async () => {
    const { gate, port } = await gateApp({ concurrency: 1, queue: 4, perDevice: 2, idleTimeoutMs: NEVER });
    const first = await stalledClient(port, 'a');
    await eventually(loadIs(gate, 1, 0), 'the first body being read', 5_000);
    const a2 = await stalledClient(port, 'a');
    await eventually(loadIs(gate, 1, 1), 'a second body of a waiting', 5_000);
    const b1 = await stalledClient(port, 'b');
    await eventually(loadIs(gate, 1, 2), 'a body of b waiting', 5_000);
    // a's own turn ended: b goes before a's second body, although that one came first.
    first.socket.destroy();
    await eventually(loadIs(gate, 1, 1), 'the next body being read', 5_000);
    b1.socket.write(`2\r\n"}\r\n0\r\n\r\n`);
    expect(statusOf(await b1.head)).toBe(202);
    a2.socket.write(`2\r\n"}\r\n0\r\n\r\n`);
    expect(statusOf(await a2.head)).toBe(202);
  });
});

describe('the body gate and bodies that trickle in', () => {
  const FLOOR = { minBytesPerSecond: 2_000, rateGraceMs: 400, rateWindowMs: 400, idleTimeoutMs: NEVER };

  it('answers a body slower than the floor 408 after the grace period, and frees its slot', async () => {
    const clock = new TestClock();
    const { gate, port, received } = await gateApp({ concurrency: 1, queue: 0, ...FLOOR, clock });
    const slow = await stalledClient(port, 'slow');
    await eventually(loadIs(gate, 1, 0), 'the body being read', 5_000);
    let answered = false;
    void slow.answer.then(() => (answered = true));
    // A few bytes every 100 ms: never idle, far under 2,000 bytes/s.
    for (let i = 0; i < 50 && !answered; i++) {
      const before = received();
      slow.socket.write('4\r\nAAAA\r\n');
      await eventually(() => answered || received() > before, 'the bytes at the server', 5_000);
      await clock.advance(100);
    }
    const answer = await slow.answer;
    expect(statusOf(answer), answer).toBe(408);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
    expect(answer).toContain('"code":"request_timeout"');
    expect(answer).toContain('bytes/s');
    expect(gate.load).toEqual({ reading: 0, waiting: 0 });
    expect(await send(port, 'other')).toBe(202);
  });

  it('lets a body that keeps above the floor be read to its end', async () => {
    const clock = new TestClock();
    const { gate, port, received } = await gateApp({ concurrency: 1, queue: 0, ...FLOOR, clock });
    const client = await stalledClient(port, 'a');
    await eventually(loadIs(gate, 1, 0), 'the body being read', 5_000);
    // 400 bytes every 50 ms (8,000 bytes/s) for several windows.
    for (let i = 0; i < 30; i++) {
      await clock.advance(50);
      const before = received();
      client.socket.write(`190\r\n${'A'.repeat(400)}\r\n`);
      await eventually(() => received() >= before + 400, 'the bytes at the server', 5_000);
    }
    client.socket.write(`2\r\n"}\r\n0\r\n\r\n`);
    expect(statusOf(await client.head)).toBe(202);
  });
});
