/**
 * Retry delays of the device actor (a lifecycle report, a resume or the intake's release the store refused)
 * and of the supervisor's credential wipe: doubling from a base delay up to a maximum, back to the base once
 * a try succeeds.
 */
import type { SpoolSettings } from './event-spool.js';

/** Delays that double from `baseDelayMs` up to `maxDelayMs`, back to the base once a try succeeds. */
export class Backoff {
  private nextDelayMs: number;

  constructor(private readonly settings: Pick<SpoolSettings, 'baseDelayMs' | 'maxDelayMs'>) {
    this.nextDelayMs = settings.baseDelayMs;
  }

  /** True before the first failure since the last success. */
  get fresh(): boolean {
    return this.nextDelayMs === this.settings.baseDelayMs;
  }

  next(): number {
    const delayMs = this.nextDelayMs;
    this.nextDelayMs = Math.min(delayMs * 2, this.settings.maxDelayMs);
    return delayMs;
  }

  reset(): void {
    this.nextDelayMs = this.settings.baseDelayMs;
  }
}
