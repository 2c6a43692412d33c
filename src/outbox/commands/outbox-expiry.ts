/**
 * Queued messages past their expiresAt become `expired` (a final status, so a `message.status` webhook),
 * whether or not their device is online: a message on a `failed` or `logged_out` session would otherwise wait
 * forever, and one that waited too long should not go out hours late. The drainer checks again before each
 * try (StartSending), so the sweep's period only bounds how late an offline device's message is reported.
 */
import type { Logger } from 'pino';
import type { MediaStore } from '../../media/media-store.js';
import { mediaOf } from '../stream/outbox-events.js';
import type { OutboxReadModel } from '../read-models/outbox-read-model.js';
import type { Outboxes } from '../stream/outboxes.js';
import { type Clock, type ClockTimer, systemClock } from '../../time/clock.js';

export const EXPIRY_SWEEP_MS = 1_000;

export interface OutboxExpiryDeps {
  outboxes: Outboxes;
  outboxView: Pick<OutboxReadModel, 'devicesWithExpired'>;
  media: Pick<MediaStore, 'remove'>;
  log: Logger;
  /** The time messages expire by, and the sweep's timer (default: the system clock). */
  clock?: Clock;
  periodMs?: number;
}

export class OutboxExpiry {
  private timer: ClockTimer | undefined;
  private running: Promise<void> | undefined;
  private readonly clock: Clock;

  constructor(private readonly deps: OutboxExpiryDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  start(): void {
    this.timer = this.clock.setInterval(() => {
      this.running ??= this.sweep()
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => (this.running = undefined));
    }, this.deps.periodMs ?? EXPIRY_SWEEP_MS);
    this.timer.unref();
  }

  /** One pass: every device with an expired queued message; answers how many messages expired. */
  async sweep(): Promise<number> {
    const now = this.clock.now();
    let expired = 0;
    for (const deviceId of this.deps.outboxView.devicesWithExpired(now)) {
      try {
        const { result } = await this.deps.outboxes.execute(deviceId, { type: 'ExpireMessages', deviceId, now });
        expired += result.length;
        for (const message of result) {
          if (mediaOf(message.content)?.source !== 'stored') continue;
          // A file left behind is removed by the sweep at the next start.
          await this.deps.media.remove(deviceId, message.outboxId).catch(() => undefined);
        }
      } catch (error) {
        this.deps.log.warn({ err: error, deviceId }, "could not expire the device's queued messages; trying again");
      }
    }
    return expired;
  }

  async stop(): Promise<void> {
    this.clock.clear(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
