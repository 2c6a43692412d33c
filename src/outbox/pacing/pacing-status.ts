/**
 * GET /pacing: where a device stands today, from its outbox stream (the sends counted, the deferral recorded) and
 * its pacing, at the time of the clock given.
 */
import type { OutboxState } from '../stream/outbox-state.js';
import type { Outboxes } from '../stream/outboxes.js';
import type { PacingContexts } from './pacing-contexts.js';
import { DEFAULT_PACING, capAt, pacingWindow, startOfDay } from './pacing.js';

export interface PacingStatus {
  /** Sends started today (local day in the pacing's time zone). */
  today: number;
  /** Today's cap, null when none. */
  cap: number | null;
  /** When the window opens again (ISO 8601), null while it is open. */
  nextWindowAt: string | null;
  /** Queued messages that wait for that window. */
  deferred: number;
}

export class PacingStatuses {
  constructor(
    private readonly outboxes: Outboxes,
    private readonly contexts: PacingContexts,
    private readonly now: () => number,
  ) {}

  async of(deviceId: string): Promise<PacingStatus> {
    const state = await this.caughtUp(deviceId);
    const now = this.now();
    const policy = this.contexts.policy(deviceId) ?? DEFAULT_PACING;
    const linkedAt = policy.warmup ? await this.contexts.linkedAt(deviceId) : undefined;
    const context = { policy, ...(linkedAt === undefined ? {} : { linkedAt }) };
    const verdict = pacingWindow(context, now, (since) => state.sendsSince(since));
    let until = verdict.go ? undefined : verdict.until;
    // A deferral recorded for later than the window judged now (e.g. a reply-only window): the recorded one holds.
    if (state.deferral && state.deferral.until > now) until = Math.max(until ?? 0, state.deferral.until);
    const queued = [...state.messages.values()].filter((m) => m.status === 'queued').length;
    return {
      today: state.sendsSince(startOfDay(now, policy.timezone)),
      cap: capAt(policy, now, linkedAt),
      nextWindowAt: until === undefined ? null : new Date(until).toISOString(),
      deferred: until === undefined ? 0 : queued,
    };
  }

  /** When the outbox's queued messages wait for (epoch ms), if they do now. */
  async deferredUntil(deviceId: string): Promise<number | undefined> {
    const outbox = await this.outboxes.get(deviceId);
    const deferral = outbox.current.deferral;
    return deferral && deferral.until > this.now() ? deferral.until : undefined;
  }

  /**
   * When pacing lets one queued message go (epoch ms), if it holds it now: a message not tried yet while a
   * deferral lasts (pacing defers first tries only; a retry waits for its backoff instead).
   */
  async messageDeferredUntil(deviceId: string, outboxId: string): Promise<number | undefined> {
    const state = await this.caughtUp(deviceId);
    const message = state.messages.get(outboxId);
    if (!message || message.status !== 'queued' || message.attempts > 0) return undefined;
    const deferral = state.deferral;
    return deferral && deferral.until > this.now() ? deferral.until : undefined;
  }

  /** The outbox's state with what other processes appended too (several processes). */
  private async caughtUp(deviceId: string): Promise<OutboxState> {
    const outbox = await this.outboxes.get(deviceId);
    const last = await this.outboxes.lastPosition(deviceId);
    if (last > 0) outbox.invalidate();
    await outbox.caughtUp();
    return outbox.current;
  }
}
