/**
 * watchBody's idle timeout on an injected clock, against a request double whose socket count and reader the test
 * sets: a body is cut the idle time after its last bytes (not sooner, and within an eighth of it after), and a
 * body whose bytes wait for the reader is not idle. The gate over real sockets: media-body-parser.gate.test.ts.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { type BodyWatch, watchBody } from '../../../src/http/body/body-gate.js';
import type { Problem } from '../../../src/http/problem.js';
import { TestClock } from '../../support/test-clock.js';

const IDLE = 8_000;

/** A request being read: the test counts the bytes at its socket, and those waiting for its reader. */
function request() {
  const req = Object.assign(new EventEmitter(), {
    socket: { bytesRead: 0 },
    complete: false,
    destroyed: false,
    readableEnded: false,
    /** Bytes waiting for the reader. */
    readableLength: 0,
    isPaused: () => false,
    destroy: () => undefined,
  });
  return req;
}

function watched(clock: TestClock) {
  const req = request();
  const res = Object.assign(new EventEmitter(), { closed: true });
  const watch = watchBody(req as unknown as IncomingMessage, res as unknown as ServerResponse, {
    idleMs: IDLE,
    clock,
  });
  watch.reading();
  return { req, watch };
}

const cutFor = (watch: BodyWatch) => (watch.signal.aborted ? (watch.signal.reason as Problem) : undefined);

describe('watchBody and a body that stops coming', () => {
  it('cuts it the idle time after its last bytes: not sooner, and within an eighth of it after', async () => {
    const clock = new TestClock();
    const { req, watch } = watched(clock);
    for (let i = 0; i < 5; i++) {
      req.socket.bytesRead += 100;
      await clock.advance(IDLE / 2);
    }
    expect(cutFor(watch)).toBeUndefined();
    req.socket.bytesRead += 100;
    await clock.advance(IDLE - 1);
    expect(cutFor(watch)).toBeUndefined();
    await clock.advance(IDLE / 8 + 1);
    expect(cutFor(watch)?.status).toBe(408);
    expect(cutFor(watch)?.message).toBe(`no bytes of the request body arrived for ${IDLE / 1000} s`);
    watch.dispose();
    expect(clock.pending()).toEqual([]);
  });

  it('does not cut a body whose bytes wait for its reader (the server is behind, not the client)', async () => {
    const clock = new TestClock();
    const { req, watch } = watched(clock);
    req.readableLength = 64 * 1024;
    await clock.advance(5 * IDLE);
    expect(cutFor(watch)).toBeUndefined();
    // The reader caught up and the client sends nothing more: idle from then on.
    req.readableLength = 0;
    await clock.advance(IDLE + IDLE / 8);
    expect(cutFor(watch)?.status).toBe(408);
    watch.dispose();
  });

  it('does not cut a body that has all arrived while its reader finishes', async () => {
    const clock = new TestClock();
    const { req, watch } = watched(clock);
    req.complete = true;
    await clock.advance(5 * IDLE);
    expect(cutFor(watch)).toBeUndefined();
    watch.dispose();
    expect(clock.pending()).toEqual([]);
  });
});
