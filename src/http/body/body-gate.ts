/**
 * Bounds how many large request bodies (media sends) are read at once: `concurrency` at a time, up to
 * `queue` more waiting their turn, and beyond that `503 server_busy` with Retry-After at once. Reading a
 * body costs disk and CPU (inflating, decoding base64) even though it is streamed: a burst of big or
 * hostile bodies then waits instead of piling up. Small bodies skip the gate.
 *
 * Fair between devices: one device has at most `perDevice` bodies read at once (a quarter of the slots by
 * default, so that two device keys sending slow bodies leave half of them to everyone else), and at most as
 * many more waiting, in its own first-come order; a freed slot goes to the devices in turn. A read whose
 * client is gone, that receives nothing for `idleTimeoutMs`, or that arrives slower than `minBytesPerSecond`
 * gives its slot back at once (see watchBody).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Clock, type ClockTimer, systemClock } from '../../time/clock.js';
import { Problem } from '../problem.js';

export interface BodyGateSettings {
  concurrency: number;
  queue: number;
  /** Bodies one device may have read at once, and waiting (default: a quarter of the concurrency, at least 1). */
  perDevice?: number;
  /** A gated body that receives no bytes for this long is answered 408 (default 8 s; tests shorten it). */
  idleTimeoutMs?: number;
  /** A gated body that arrives slower than this, over a window after a grace period, is answered 408. */
  minBytesPerSecond?: number;
  /** How long a body is read before its rate counts, and the window it is measured over (tests shorten them). */
  rateGraceMs?: number;
  rateWindowMs?: number;
  /** The time and timer of the idle timeout and the rate's samples (tests move it on: test/support/test-clock.ts). */
  clock?: Clock;
}

/** Bodies up to this size, with a known length and no Content-Encoding, are read without waiting. */
export const SMALL_BODY_BYTES = 1024 * 1024;
/** Long for a live connection to send nothing, and short enough that a stalled body is gone well within 10 s. */
export const BODY_IDLE_TIMEOUT_MS = 8_000;
/**
 * A body trickled in a few bytes at a time keeps its slot past any idle timeout: under 512 bytes/s over
 * 10 s, after its first 10 s, it is cut. The slowest mobile links (EDGE) still carry several KiB/s.
 */
export const BODY_MIN_BYTES_PER_SECOND = 512;
export const BODY_RATE_GRACE_MS = 10_000;
export const BODY_RATE_WINDOW_MS = 10_000;

const busy = (detail: string) => new Problem(503, 'server_busy', detail, { headers: { 'Retry-After': '1' } });

interface Waiter {
  start(): void;
  signal: AbortSignal;
  onAbort: () => void;
}

export class BodyGate {
  readonly perDevice: number;
  readonly idleTimeoutMs: number;
  readonly rate: { minBytesPerSecond: number; graceMs: number; windowMs: number };
  /** Times the idle timeout and the rate (see watchBody). */
  readonly clock: Clock;
  private reading = 0;
  private waitingCount = 0;
  /** Bodies being read per device. */
  private readonly readingBy = new Map<string, number>();
  /** Bodies waiting per device, oldest first. */
  private readonly waitingBy = new Map<string, Waiter[]>();
  /** When each device with bodies in the gate last began a read (a count of reads begun), for the turns. */
  private readonly lastStart = new Map<string, number>();
  private starts = 0;

  constructor(private readonly settings: BodyGateSettings) {
    this.perDevice = settings.perDevice ?? Math.max(1, Math.floor(settings.concurrency / 4));
    this.idleTimeoutMs = settings.idleTimeoutMs ?? BODY_IDLE_TIMEOUT_MS;
    this.rate = {
      minBytesPerSecond: settings.minBytesPerSecond ?? BODY_MIN_BYTES_PER_SECOND,
      graceMs: settings.rateGraceMs ?? BODY_RATE_GRACE_MS,
      windowMs: settings.rateWindowMs ?? BODY_RATE_WINDOW_MS,
    };
    this.clock = settings.clock ?? systemClock;
  }

  /**
   * Runs `read` in its turn, or throws 503 when the queue (or the device's share of it) is full. When `signal`
   * aborts, a waiting read is dropped and a running one gives up its slot at once; either way this throws the
   * signal's reason.
   */
  async run<T>(deviceId: string, read: () => Promise<T>, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    if (!this.mayStart(deviceId)) {
      const waiting = this.waitingBy.get(deviceId)?.length ?? 0;
      if (waiting >= this.perDevice)
        throw busy(
          `this device already has ${this.readingBy.get(deviceId) ?? 0} large request bodies being read and ${waiting} waiting, its most at once; try again shortly`,
        );
      if (this.waitingCount >= this.settings.queue)
        throw busy('too many large request bodies are being read right now; try again shortly');
      await this.waitTurn(deviceId, signal);
    } else this.take(deviceId);
    try {
      // The read itself may go on a little after an abort (its caller waits for it); its slot does not.
      return await new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(signal.reason as Error);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        read()
          .then(resolve, reject)
          .finally(() => signal.removeEventListener('abort', onAbort));
      });
    } finally {
      this.give(deviceId);
    }
  }

  /** Bodies being read and waiting (metrics, tests). */
  get load(): { reading: number; waiting: number } {
    return { reading: this.reading, waiting: this.waitingCount };
  }

  private mayStart(deviceId: string): boolean {
    return this.reading < this.settings.concurrency && (this.readingBy.get(deviceId) ?? 0) < this.perDevice;
  }

  private take(deviceId: string): void {
    this.reading++;
    this.readingBy.set(deviceId, (this.readingBy.get(deviceId) ?? 0) + 1);
    this.lastStart.set(deviceId, ++this.starts);
  }

  private give(deviceId: string): void {
    this.reading--;
    const left = this.readingBy.get(deviceId)! - 1;
    if (left > 0) this.readingBy.set(deviceId, left);
    else {
      this.readingBy.delete(deviceId);
      if (!this.waitingBy.has(deviceId)) this.lastStart.delete(deviceId);
    }
    this.startNext();
  }

  private waitTurn(deviceId: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        signal,
        start: () => {
          signal.removeEventListener('abort', waiter.onAbort);
          resolve();
        },
        onAbort: () => {
          this.dropWaiter(deviceId, waiter);
          reject(signal.reason as Error);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      const queue = this.waitingBy.get(deviceId);
      if (queue) queue.push(waiter);
      else this.waitingBy.set(deviceId, [waiter]);
      this.waitingCount++;
    });
  }

  private dropWaiter(deviceId: string, waiter: Waiter): void {
    const queue = this.waitingBy.get(deviceId);
    const index = queue?.indexOf(waiter) ?? -1;
    if (!queue || index < 0) return;
    queue.splice(index, 1);
    this.waitingCount--;
    if (queue.length > 0) return;
    this.waitingBy.delete(deviceId);
    if (!this.readingBy.has(deviceId)) this.lastStart.delete(deviceId);
  }

  /**
   * Free slots go to the waiting devices in turn, each one's oldest body first: to the one with the fewest bodies
   * being read, and of those to the one whose last read began longest ago.
   */
  private startNext(): void {
    while (this.reading < this.settings.concurrency) {
      let next: string | undefined;
      for (const deviceId of this.waitingBy.keys()) {
        if (!this.mayStart(deviceId)) continue;
        if (next === undefined || this.goesBefore(deviceId, next)) next = deviceId;
      }
      if (next === undefined) return;
      const queue = this.waitingBy.get(next)!;
      const waiter = queue.shift()!;
      this.waitingCount--;
      if (queue.length === 0) this.waitingBy.delete(next);
      this.take(next);
      waiter.start();
    }
  }

  private goesBefore(a: string, b: string): boolean {
    const readingA = this.readingBy.get(a) ?? 0;
    const readingB = this.readingBy.get(b) ?? 0;
    if (readingA !== readingB) return readingA < readingB;
    return (this.lastStart.get(a) ?? -1) < (this.lastStart.get(b) ?? -1);
  }
}

export interface BodyWatch {
  /** Aborts (with the Problem to answer) when the client goes before its body is read, or the body stalls. */
  signal: AbortSignal;
  /** Reading begins: from now on, `idleMs` without a byte aborts. */
  reading(): void;
  dispose(): void;
}

/** What a read is held to once it begins (BodyGate's settings), and the clock that times it. */
export interface BodyWatchLimits {
  idleMs: number;
  rate?: BodyGate['rate'];
  clock: Clock;
}

/**
 * Ties a gated read to its request. Without it, a request whose client went away while it waited would
 * still be read in its turn (waiting for bytes that never come, and keeping the slot for good), and a
 * client that stops sending would keep its slot until the server's requestTimeout, and one that sends a few
 * bytes now and then would keep it for good.
 */
export function watchBody(
  req: IncomingMessage,
  res: ServerResponse,
  { idleMs, rate, clock }: BodyWatchLimits,
): BodyWatch {
  const controller = new AbortController();
  // 'close' also follows a body read to its end: only one that never ended means the client is gone.
  const onClose = () => {
    if (!req.readableEnded)
      controller.abort(new Problem(400, 'invalid_request', 'the request was aborted', { errors: [] }));
  };
  req.once('close', onClose);
  if (req.destroyed) onClose();
  let timer: ClockTimer | undefined;
  // The socket's count of bytes received: read without taking the body's data from its reader. While bytes wait
  // for the reader (so that the server stopped reading the socket), the client is neither idle nor slow: a window
  // with such a moment is not judged.
  const watch = () => {
    const socket = req.socket;
    const began = clock.now();
    let heard = { at: began, bytes: socket.bytesRead };
    const samples = [{ at: began, bytes: socket.bytesRead, readerBehind: false }];
    const cut = (detail: string) =>
      // The rest of the body is not waited for: the connection closes once this is answered.
      controller.abort(new Problem(408, 'request_timeout', detail, { headers: { Connection: 'close' } }));
    const tick = () => {
      // Once the whole body has arrived, the reader is merely finishing: that is not idle.
      if (req.complete || controller.signal.aborted) return;
      const now = clock.now();
      const bytes = socket.bytesRead;
      const readerBehind = req.readableLength > 0 || req.isPaused();
      // Idle: no byte since a tick at least idleMs ago (so never sooner than idleMs after the last one).
      if (bytes !== heard.bytes || readerBehind) heard = { at: now, bytes };
      else if (now - heard.at >= idleMs) return cut(`no bytes of the request body arrived for ${idleMs / 1000} s`);
      if (!rate) return;
      const { minBytesPerSecond, graceMs, windowMs } = rate;
      samples.push({ at: now, bytes, readerBehind });
      // Keep the newest sample at least a window old as the window's start.
      while (samples.length > 2 && now - samples[1].at >= windowMs) samples.shift();
      const start = samples[0];
      if (now - began < graceMs || now - start.at < windowMs) return;
      if (samples.some((sample) => sample.readerBehind)) return;
      const perSecond = ((bytes - start.bytes) * 1000) / (now - start.at);
      if (perSecond >= minBytesPerSecond) return;
      cut(
        `the request body arrived at ${Math.round(perSecond)} bytes/s over the last ${Math.round((now - start.at) / 1000)} s, slower than this server waits for (${minBytesPerSecond} bytes/s)`,
      );
    };
    // A stall is seen within an eighth of the idle time after it is due (so the default's is gone within 10 s); the
    // rate is sampled a few times per window.
    const everyMs = Math.min(idleMs / 8, (rate?.windowMs ?? Infinity) / 4, (rate?.graceMs ?? Infinity) / 4);
    timer = clock.setInterval(tick, Math.max(10, everyMs)).unref();
  };
  return {
    signal: controller.signal,
    reading() {
      if (controller.signal.aborted || timer) return;
      watch();
    },
    dispose() {
      clock.clear(timer);
      req.off('close', onClose);
      // A read cut short still waits for the rest of the body: once the answer is out, the request is ended
      // (Node leaves a request whose answer is done out of the connection's clean-up), so that read ends too.
      if (controller.signal.aborted && !req.destroyed) {
        if (res.closed) req.destroy();
        else res.once('close', () => req.destroy());
      }
    },
  };
}
