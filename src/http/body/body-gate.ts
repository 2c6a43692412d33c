/**
 * Bounds how many large request bodies (media sends) are read at once: `concurrency` at a time, up to
 * `queue` more waiting their turn, and beyond that `503 server_busy` with Retry-After at once. Reading a
 * body costs disk and CPU (inflating, decoding base64) even though it is streamed: a burst of big or
 * hostile bodies then waits instead of piling up. Small bodies skip the gate.
 *
 * One device may have at most `perDevice` bodies in the gate (read or waiting), so that it cannot take
 * every slot; a read whose client is gone, or that receives nothing for `idleTimeoutMs`, gives its slot
 * back at once (see watchBody).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import PQueue from 'p-queue';
import { Problem } from '../problem.js';

export interface BodyGateSettings {
  concurrency: number;
  queue: number;
  /** Bodies one device may have read or waiting at once (default: half the concurrency, at least 1). */
  perDevice?: number;
  /** A gated body that receives no bytes for this long is answered 408 (default 8 s; tests shorten it). */
  idleTimeoutMs?: number;
}

/** Bodies up to this size, with a known length and no Content-Encoding, are read without waiting. */
export const SMALL_BODY_BYTES = 1024 * 1024;
/** Long for a live connection to send nothing, and short enough that a stalled body is gone well within 10 s. */
export const BODY_IDLE_TIMEOUT_MS = 8_000;

const busy = (detail: string) => new Problem(503, 'server_busy', detail, { headers: { 'Retry-After': '1' } });

export class BodyGate {
  private readonly queue: PQueue;
  readonly perDevice: number;
  readonly idleTimeoutMs: number;
  /** Bodies in the gate (read or waiting) per device. */
  private readonly held = new Map<string, number>();

  constructor(private readonly settings: BodyGateSettings) {
    this.queue = new PQueue({ concurrency: settings.concurrency });
    this.perDevice = settings.perDevice ?? Math.max(1, Math.floor(settings.concurrency / 2));
    this.idleTimeoutMs = settings.idleTimeoutMs ?? BODY_IDLE_TIMEOUT_MS;
  }

  /**
   * Runs `read` in its turn, or throws 503 when the queue (or the device's share) is full. When `signal`
   * aborts, a waiting read is dropped and a running one gives up its slot; either way this throws the
   * signal's reason.
   */
  async run<T>(deviceId: string, read: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.queue.pending >= this.settings.concurrency && this.queue.size >= this.settings.queue) {
      throw busy('too many large request bodies are being read right now; try again shortly');
    }
    const held = this.held.get(deviceId) ?? 0;
    if (held >= this.perDevice) {
      throw busy(
        `this device already has ${held} large request bodies being read or waiting, its most at once; try again shortly`,
      );
    }
    this.held.set(deviceId, held + 1);
    try {
      return await this.queue.add(read, { signal });
    } finally {
      const left = this.held.get(deviceId)! - 1;
      if (left === 0) this.held.delete(deviceId);
      else this.held.set(deviceId, left);
    }
  }

  /** Bodies being read and waiting (metrics, tests). */
  get load(): { reading: number; waiting: number } {
    return { reading: this.queue.pending, waiting: this.queue.size };
  }
}

export interface BodyWatch {
  /** Aborts (with the Problem to answer) when the client goes before its body is read, or the body stalls. */
  signal: AbortSignal;
  /** Reading begins: from now on, `idleMs` without a byte aborts. */
  reading(): void;
  dispose(): void;
}

/**
 * Ties a gated read to its request. Without it, a request whose client went away while it waited would
 * still be read in its turn (waiting for bytes that never come, and keeping the slot for good), and a
 * client that stops sending would keep its slot until the server's requestTimeout.
 */
export function watchBody(req: IncomingMessage, res: ServerResponse, idleMs: number): BodyWatch {
  const controller = new AbortController();
  // 'close' also follows a body read to its end: only one that never ended means the client is gone.
  const onClose = () => {
    if (!req.readableEnded)
      controller.abort(new Problem(400, 'invalid_request', 'the request was aborted', { errors: [] }));
  };
  // The idle socket's 'timeout' goes to the response too (and with a listener, Node leaves the socket open).
  // Once the whole body has arrived, the reader is merely finishing: that is not idle.
  const onIdle = () => {
    if (req.complete) return;
    controller.abort(
      new Problem(408, 'request_timeout', `no bytes of the request body arrived for ${idleMs / 1000} s`, {
        // The rest of the body is not waited for: the connection closes once this is answered.
        headers: { Connection: 'close' },
      }),
    );
  };
  req.once('close', onClose);
  if (req.destroyed) onClose();
  let idleWatched = false;
  return {
    signal: controller.signal,
    reading() {
      if (controller.signal.aborted) return;
      idleWatched = true;
      res.on('timeout', onIdle);
      req.socket.setTimeout(idleMs);
    },
    dispose() {
      req.off('close', onClose);
      // A read cut short still waits for the rest of the body: once the answer is out, the request is ended
      // (Node leaves a request whose answer is done out of the connection's clean-up), so that read ends too.
      if (controller.signal.aborted && !req.destroyed) {
        if (res.closed) req.destroy();
        else res.once('close', () => req.destroy());
      }
      if (!idleWatched) return;
      res.off('timeout', onIdle);
      // Back to the server's own socket timeout (0, none, unless it sets one).
      const socket = req.socket as Socket & { server?: { timeout?: number } };
      if (!socket.destroyed) socket.setTimeout(socket.server?.timeout ?? 0);
    },
  };
}
