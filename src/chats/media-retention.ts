/**
 * Received media, and those of messages this device sent (kept from `sent` on, for forwards), are kept for
 * INBOUND_MEDIA_RETENTION: a sweep at start and every so often removes older files, and the partial files of
 * writes a crash interrupted. The media route answers 410 by age alone, so a late sweep never serves an
 * expired file; media of a message deleted for everyone go within seconds (and are not served from then on).
 */
import type { Logger } from 'pino';
import type { InboundMediaStore } from '../media/inbound-media-store.js';
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';
import type { MessageIndex } from './message-index.js';

const SWEEP_EVERY_MS = 60 * 60_000;
/** An indexed look at the deletions since the last one: costs next to nothing when there are none. */
const REVOKED_SWEEP_EVERY_MS = 5_000;
const PAGE = 500;

export class MediaRetention {
  private timer: ClockTimer | undefined;
  private revokedTimer: ClockTimer | undefined;
  /** Files up to this storage time are gone already: the next sweep starts past them. */
  private sweptUntil = 0;
  /** Files of messages deleted up to this log position are gone already. */
  private revokedSweptUntil = 0;

  constructor(
    private readonly index: Pick<MessageIndex, 'mediaStoredBefore' | 'revokedMediaAfter'>,
    private readonly files: InboundMediaStore,
    private readonly retentionMs: number,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
  ) {}

  start(): void {
    void this.sweep();
    void this.sweepAbandoned();
    this.timer = this.clock.setInterval(
      () => {
        void this.sweep();
        void this.sweepAbandoned();
      },
      Math.min(SWEEP_EVERY_MS, this.retentionMs),
    );
    this.timer.unref();
    void this.sweepRevoked();
    this.revokedTimer = this.clock.setInterval(() => void this.sweepRevoked(), REVOKED_SWEEP_EVERY_MS);
    this.revokedTimer.unref();
  }

  stop(): void {
    this.clock.clear(this.timer);
    this.clock.clear(this.revokedTimer);
    this.timer = undefined;
    this.revokedTimer = undefined;
  }

  /** Removes the files of media whose messages were deleted for everyone since the last sweep; answers how many. */
  async sweepRevoked(): Promise<number> {
    let removed = 0;
    try {
      for (;;) {
        const page = this.index.revokedMediaAfter(this.revokedSweptUntil, PAGE);
        for (const media of page) {
          await this.files.remove(media.deviceId, media.waMessageId);
          this.revokedSweptUntil = media.revokedAt;
        }
        removed += page.length;
        if (page.length < PAGE) break;
      }
    } catch (error) {
      this.log.warn({ err: error }, 'removing the media of deleted messages failed');
    }
    return removed;
  }

  /** Removes the partial files of writes a crash interrupted (see InboundMediaStore.removeAbandonedParts); answers how many. */
  async sweepAbandoned(now = this.clock.now()): Promise<number> {
    try {
      return await this.files.removeAbandonedParts(now);
    } catch (error) {
      this.log.warn({ err: error }, 'removing abandoned partial media files failed');
      return 0;
    }
  }

  /** Removes the files stored before the retention period; answers how many. */
  async sweep(now = this.clock.now()): Promise<number> {
    let removed = 0;
    try {
      const cutoff = now - this.retentionMs;
      for (;;) {
        // Files with the same storage time as the last one swept may be left for the next sweep: harmless (410 by age).
        const page = this.index.mediaStoredBefore(cutoff, PAGE, this.sweptUntil);
        if (page.length === 0) break;
        for (const media of page) await this.files.remove(media.deviceId, media.waMessageId);
        removed += page.length;
        this.sweptUntil = page[page.length - 1].storedAt;
        if (page.length < PAGE) break;
      }
    } catch (error) {
      this.log.warn({ err: error }, 'sweeping expired media failed');
    }
    return removed;
  }
}
