/**
 * Bounds how many large request bodies (media sends) are read at once: `concurrency` at a time, up to
 * `queue` more waiting their turn, and beyond that `503 server_busy` with Retry-After at once. Reading a
 * body costs disk and CPU (inflating, decoding base64) even though it is streamed: a burst of big or
 * hostile bodies then waits instead of piling up. Small bodies skip the gate.
 */
import PQueue from 'p-queue';
import { Problem } from '../problem.js';

export interface BodyGateSettings {
  concurrency: number;
  queue: number;
}

/** Bodies up to this size, with a known length and no Content-Encoding, are read without waiting. */
export const SMALL_BODY_BYTES = 1024 * 1024;

export class BodyGate {
  private readonly queue: PQueue;

  constructor(private readonly settings: BodyGateSettings) {
    this.queue = new PQueue({ concurrency: settings.concurrency });
  }

  /** Runs `read` in its turn, or throws 503 when the queue is full. */
  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.queue.pending >= this.settings.concurrency && this.queue.size >= this.settings.queue) {
      throw new Problem(503, 'server_busy', 'too many large request bodies are being read right now; try again shortly', { headers: { 'Retry-After': '1' } });
    }
    return this.queue.add(read);
  }

  /** Bodies being read and waiting (metrics, tests). */
  get load(): { reading: number; waiting: number } {
    return { reading: this.queue.pending, waiting: this.queue.size };
  }
}
