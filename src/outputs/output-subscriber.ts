/**
 * One output's subscriber of the log (docs/architecture.md, "Event outputs"): it reads the log page by page
 * after its position, publishes the events its output selects, in log order (so in order per device), and
 * moves its position past a page only once the broker confirmed all of it. A broker that is down, refuses or
 * is restarted holds the position: the page is published again, on a fresh connection, after a pause that
 * doubles with each failure (up to OUTPUT_RETRY_MAX_DELAY), the failure recorded as the output's `lastError`
 * (once per streak) and cleared when a page goes through. The position is recorded in the output's stream
 * about once a second while it moves and when the subscriber catches up, so a restart, even a kill, publishes
 * at most what followed the last record again: at least once, duplicates with the same message id.
 *
 * A subscriber at the head takes the new events from the process's shared tail of the log (log-tail.ts, fed by
 * one subscription in outputs.ts) instead of reading them again itself; one that fell behind what the tail keeps
 * reads its own pages from the log until it is back within it. Either way it publishes the same pages.
 */
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/event-store.js';
import type { LogTail } from '../eventstore/log-tail.js';
import { maskUrlsIn } from '../secrets/url-credentials.js';
import { type Clock, type ClockTimer } from '../time/clock.js';
import type { OutputCommands } from './output-commands.js';
import type { OutputConfig } from './output-events.js';
import { type OutgoingMessage, messageOf } from './output-message.js';
import type { Publisher } from './output-publisher.js';

/** The position is recorded at most this often while it moves (and whenever the subscriber catches up). */
export const RECORD_EVERY_MS = 1_000;
/** ...or after this many events read since the last record, published or not. */
const RECORD_EVERY_EVENTS = 10_000;
/** The first pause after a failure; it doubles with each failure in a row. */
const RETRY_MIN_DELAY_MS = 250;

export interface SubscriberDeps {
  store: Pick<EventStore, 'readAll'>;
  /** The newest events, shared with the other outputs; without it every page is read from the store. */
  tail?: Pick<LogTail, 'read'>;
  commands: Pick<OutputCommands, 'recordPosition' | 'recordError' | 'state'>;
  publisher: Publisher;
  log: Logger;
  clock: Clock;
  /** The longest pause between tries. */
  retryMaxDelayMs: number;
  /** Events read from the log at a time (one batch published at most this large). */
  pageSize: number;
  /** Called with the number of messages of each confirmed batch. */
  onPublished?: (count: number) => void;
}

export class OutputSubscriber {
  /** Every event the output selects up to this position is confirmed by the broker (-1 until loaded). */
  position = -1;
  /** Why publishing fails now; null while it works. */
  lastError: string | null = null;
  private stopped = false;
  private markStopped: () => void = () => undefined;
  /** Resolves once stop() is called. */
  private readonly stopping = new Promise<void>((resolve) => (this.markStopped = resolve));
  private dirty = true;
  /** Ends an idle wait (something new in the log). */
  private resume: (() => void) | undefined;
  /** Ends any wait (stopping). */
  private cancel: (() => void) | undefined;
  private timer: ClockTimer | undefined;
  private running: Promise<void> | undefined;
  private published = 0;
  private read = 0;
  private lastRecordAt: number;

  constructor(
    readonly outputId: string,
    private readonly config: OutputConfig,
    private readonly deps: SubscriberDeps,
  ) {
    this.lastRecordAt = deps.clock.now();
  }

  start(): void {
    this.running = this.run();
  }

  /** Something was appended to the log: read on. */
  wake(): void {
    this.dirty = true;
    this.resume?.();
  }

  /** Stops publishing (a batch in flight is not recorded: it goes again), records the position reached, closes the connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.markStopped();
    this.cancel?.();
    await this.deps.publisher.close();
    await this.running;
    if (this.published > 0) await this.record();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (this.position < 0) {
          const state = await this.deps.commands.state(this.outputId);
          this.position = state.position;
          this.lastError = state.lastError;
        }
        this.dirty = false;
        const page =
          this.deps.tail?.read(this.position, this.deps.pageSize) ??
          (await this.deps.store.readAll({ after: this.position, maxCount: this.deps.pageSize }));
        failures = 0;
        if (page.length === 0) {
          if (this.published > 0) await this.record();
          if (!this.dirty) await this.pause(undefined);
          continue;
        }
        this.dirty = true; // more may follow the page
        const messages: OutgoingMessage[] = [];
        for (const event of page) {
          const message = messageOf(event, this.config);
          if (message) messages.push(message);
        }
        if (messages.length > 0 && !(await this.publish(messages))) return;
        this.position = page[page.length - 1].position;
        this.published += messages.length;
        this.read += page.length;
        if (
          (this.published > 0 && this.deps.clock.now() - this.lastRecordAt >= RECORD_EVERY_MS) ||
          this.read >= RECORD_EVERY_EVENTS
        )
          await this.record();
      } catch (error) {
        // The store failed (a read, a record): tried again after a pause, from the position confirmed.
        if (this.stopped) return;
        failures += 1;
        this.deps.log.warn({ err: error, outputId: this.outputId }, 'output subscriber failed; trying again');
        await this.pause(this.delay(failures));
      }
    }
  }

  /** Publishes the batch until the broker confirms it all; false when stopped first. */
  private async publish(messages: readonly OutgoingMessage[]): Promise<boolean> {
    let failures = 0;
    for (;;) {
      if (this.stopped) return false;
      try {
        // A batch in flight is cut short by stop(): it is not recorded and goes again after the restart.
        await Promise.race([this.deps.publisher.publish(messages), this.stopping]);
        if (this.stopped) return false;
        this.deps.onPublished?.(messages.length);
        if (this.lastError !== null) {
          this.lastError = null;
          this.deps.log.info({ outputId: this.outputId }, 'output publishes again');
          this.recordError(null);
        }
        return true;
      } catch (error) {
        if (this.stopped) return false;
        failures += 1;
        const reason = maskUrlsIn(error instanceof Error ? error.message || error.name : String(error));
        if (reason !== this.lastError) {
          this.lastError = reason;
          this.deps.log.warn(
            { outputId: this.outputId, type: this.config.type, url: this.config.url, error: reason },
            'output cannot publish; its position holds and it tries again (logged once until it publishes again)',
          );
          this.recordError(reason);
        }
        await this.pause(this.delay(failures));
      }
    }
  }

  private async record(): Promise<void> {
    const position = this.position;
    await this.deps.commands.recordPosition(this.outputId, position);
    this.published = 0;
    this.read = 0;
    this.lastRecordAt = this.deps.clock.now();
  }

  private recordError(error: string | null): void {
    this.deps.commands
      .recordError(this.outputId, error)
      .catch((err: unknown) =>
        this.deps.log.warn({ err, outputId: this.outputId }, 'could not record an output error'),
      );
  }

  private delay(failures: number): number {
    return Math.min(RETRY_MIN_DELAY_MS * 2 ** (failures - 1), this.deps.retryMaxDelayMs);
  }

  /** Waits `ms` (undefined: until woken), or until stopped. */
  private pause(ms: number | undefined): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.deps.clock.clear(this.timer);
        this.timer = undefined;
        this.resume = undefined;
        this.cancel = undefined;
        resolve();
      };
      this.cancel = done;
      if (ms === undefined) this.resume = done;
      else this.timer = this.deps.clock.setTimeout(done, ms).unref();
    });
  }
}
