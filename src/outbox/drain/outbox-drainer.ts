/**
 * Drains each device's outbox while its session is online: FIFO, one message at a time, at most
 * OUTBOX_RATE_PER_MINUTE tries started in any 60 s window (revokes included), each after a small random pause
 * so that a burst does not look like spam. Every try is recorded before the engine is asked and its outcome
 * after (invariant 2): a try cut short by a crash is sent again with the same waMessageId. A sent message's
 * media file is kept for forwards; a failed or expired one's is removed.
 */
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { OutboxSettings } from '../../config.js';
import { EngineError, type EngineConnection } from '../../engines/engine.js';
import { MediaUnavailableError } from '../../media/media-fetcher.js';
import type { MediaStore } from '../../media/media-store.js';
import { type Fence, FenceRejectedError } from '../../eventstore/event-store.js';
import type { DeviceConnections } from './device-connections.js';
import type { DeviceOutbox, Executed } from '../stream/device-outbox.js';
import type { MessageDispatcher } from './message-dispatcher.js';
import type { OutboxCommand, OutboxResultOf } from '../stream/outbox-decider.js';
import { type OutboxError, mediaOf } from '../stream/outbox-events.js';
import type { OutboxState, PendingMessage } from '../stream/outbox-state.js';
import type { Outboxes } from '../stream/outboxes.js';
import { retryDelayMs } from './retry-delay.js';
import { type Clock, systemClock } from '../../time/clock.js';
import { type PacingContext, isReply, pacingWindow, typingMs } from '../pacing/pacing.js';

const WINDOW_MS = 60_000;
/** After an unexpected failure of the lane itself (e.g. the store is down), wait this long before going on. */
const LANE_ERROR_PAUSE_MS = 1_000;
/** Quiet hours with allowReplies: how many queued messages are looked through for a reply that may go. */
const REPLY_SCAN = 100;
/** At shutdown, how long to wait for tries under way to record their outcome. */
const STOP_GRACE_MS = 5_000;

export interface OutboxDrainerDeps {
  outboxes: Outboxes;
  connections: DeviceConnections;
  dispatcher: Pick<MessageDispatcher, 'send' | 'revoke'>;
  media: Pick<MediaStore, 'remove' | 'keepSent'>;
  settings: OutboxSettings;
  log: Logger;
  random?: () => number;
  now?: () => number;
  /** The waits for a backoff, the rate and the spacing; also the time, unless `now` is given (default: the system clock). */
  clock?: Clock;
  /**
   * Several processes: the lease a device is run under (undefined: this process does not run it). Every
   * record of a try carries it, so a former owner's try is refused before anything is sent; a refusal is
   * reported back, and the process stops the device at once.
   */
  fences?: DeviceFences;
  /**
   * The device's pacing (src/outbox/pacing) and what it needs to know of a recipient; undefined: the device's
   * sends are not paced. Asked before each first try.
   */
  pacing?: (deviceId: string, to: string) => Promise<PacingContext | undefined>;
}

/** The leases of this process, as the outbox sees them (src/cluster's DeviceLeases). */
export interface DeviceFences {
  fence(deviceId: string): Fence | undefined;
  fenceRejected(deviceId: string, error: FenceRejectedError): void;
}

type Job =
  { type: 'send'; outboxId: string } | { type: 'revoke'; waMessageId: string } | { type: 'wait'; until: number };

/** Whether the job sends a text (typing is shown before texts). */
function isTyped(state: OutboxState, job: Job): boolean {
  return job.type === 'send' && state.messages.get(job.outboxId)?.content.kind === 'text';
}

/** What to do next: a due revoke first, else the head of the FIFO (or wait for its backoff to end). */
export function nextJob(state: OutboxState, now: number): Job | undefined {
  let earliest = Number.POSITIVE_INFINITY;
  for (const revoke of state.revokes.values()) {
    if (revoke.retryAt <= now) return { type: 'revoke', waMessageId: revoke.waMessageId };
    earliest = Math.min(earliest, revoke.retryAt);
  }
  const head = state.head();
  if (head) {
    if (head.retryAt <= now) return { type: 'send', outboxId: head.outboxId };
    earliest = Math.min(earliest, head.retryAt);
  }
  return earliest === Number.POSITIVE_INFINITY ? undefined : { type: 'wait', until: earliest };
}

export class OutboxDrainer {
  private readonly lanes = new Map<string, DeviceLane>();
  private readonly unsubscribe: Array<() => void> = [];
  private stopped = false;
  readonly random: () => number;
  readonly now: () => number;
  readonly clock: Clock;

  constructor(readonly deps: OutboxDrainerDeps) {
    this.random = deps.random ?? Math.random;
    this.clock = deps.clock ?? systemClock;
    this.now = deps.now ?? (() => this.clock.now());
  }

  /** Starts following session states and outbox changes; `waiting` are the devices that have messages pending. */
  start(waiting: Iterable<string> = []): void {
    this.unsubscribe.push(
      this.deps.connections.onStateChange((deviceId, state) => {
        if (state === 'online') this.kick(deviceId);
      }),
      this.deps.outboxes.onChange((deviceId) => this.kick(deviceId)),
    );
    for (const deviceId of waiting) this.kick(deviceId);
  }

  /** Something may be sendable for this device: make sure its lane is running (if it is online). */
  kick(deviceId: string): void {
    if (this.stopped) return;
    const lane = this.lanes.get(deviceId);
    if (lane) {
      lane.wake();
      return;
    }
    if (!this.deps.connections.connection(deviceId)) return;
    const created = new DeviceLane(deviceId, this);
    this.lanes.set(deviceId, created);
    created.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const off of this.unsubscribe.splice(0)) off();
    const lanes = [...this.lanes.values()];
    for (const lane of lanes) lane.stop();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)));
    await Promise.race([Promise.all(lanes.map((lane) => lane.idle())), grace]);
    clearTimeout(timer);
  }

  get isStopped(): boolean {
    return this.stopped;
  }
}

/** One device's drain loop and rate limiter. Lanes are kept, idle ones too: the limiter remembers the last minute. */
class DeviceLane {
  private readonly queue: PQueue;
  private running: Promise<void> | undefined;
  /** The try under way, if any: stop() lets it record its outcome. */
  private inFlight: Promise<void> | undefined;
  /** Aborted by stop(): a try still waiting for the rate limiter is dropped (it stays in the outbox). */
  private readonly abort = new AbortController();
  private dirty = false;
  private stopped = false;
  /**
   * Messages the engine took whose `sent` could not be recorded yet (the store failed a moment): the lane
   * records that when it comes back to them, instead of sending them again.
   */
  private readonly sentUnrecorded = new Set<string>();
  private interrupt: (() => void) | undefined;

  constructor(
    readonly deviceId: string,
    private readonly drainer: OutboxDrainer,
  ) {
    const { ratePerMinute } = drainer.deps.settings;
    this.queue = new PQueue({ concurrency: 1, intervalCap: ratePerMinute, interval: WINDOW_MS, strict: true });
  }

  wake(): void {
    this.dirty = true;
    this.interrupt?.();
    if (this.running) return;
    this.running = this.loop()
      .catch(async (error: unknown) => {
        this.drainer.deps.log.error({ err: error, deviceId: this.deviceId }, 'outbox lane failed; trying again');
        await this.sleep(LANE_ERROR_PAUSE_MS, false);
        this.dirty = true;
      })
      .finally(() => {
        this.running = undefined;
        // A wake that came in while the loop was on its way out.
        if (this.dirty && !this.stopped) this.wake();
      });
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.interrupt?.();
  }

  async idle(): Promise<void> {
    await Promise.all([this.running, this.inFlight]);
  }

  private async loop(): Promise<void> {
    const { outboxes, connections, settings, log } = this.drainer.deps;
    const outbox = await outboxes.get(this.deviceId);
    while (!this.stopped && !this.drainer.isStopped) {
      this.dirty = false;
      const connection = connections.connection(this.deviceId);
      if (!connection) return;
      const job = nextJob(outbox.current, this.drainer.now());
      if (!job) return;
      if (job.type === 'wait') {
        await this.sleep(job.until - this.drainer.now(), true);
        continue;
      }
      let pacing: PacingContext | undefined;
      if (job.type === 'send') {
        const paced = await this.paced(outbox, job.outboxId);
        if (paced.kind === 'deferred') {
          // Woken early by a change (a new setting, a message cancelled): judged again.
          await this.sleep(paced.until - this.drainer.now(), true);
          continue;
        }
        job.outboxId = paced.outboxId;
        pacing = paced.pacing;
      }
      const typing = pacing?.policy.typing === true && isTyped(outbox.current, job);
      // Typing takes the place of the spacing: a queue of texts is not slowed beyond each one's typing time.
      if (settings.spacingMaxMs > 0 && !typing) await this.sleep(this.drainer.random() * settings.spacingMaxMs, false);
      if (this.stopped) return;
      // The rate as the stream counts it: tries made by the process that ran the device before this one count too.
      // A revoke waits for it as well (its tries are not recorded before they are made, so only this process's
      // limiter counts them).
      const rateWait = outbox.current.rateWait(this.drainer.now(), settings.ratePerMinute);
      if (rateWait > 0) {
        await this.sleep(rateWait, false);
        continue;
      }
      const attempt = () => {
        const tried =
          job.type === 'send' ? this.send(outbox, job.outboxId, pacing) : this.revoke(outbox, job.waMessageId);
        this.inFlight = tried.catch(() => undefined);
        return tried;
      };
      try {
        await this.queue.add(attempt, { signal: this.abort.signal });
      } catch (error) {
        if (this.stopped) return;
        log.error({ err: error, deviceId: this.deviceId }, 'outbox try could not be recorded; pausing the lane');
        await this.sleep(LANE_ERROR_PAUSE_MS, false);
      }
    }
  }

  /**
   * Whether the head may be tried now under the device's pacing (the decider's rule, judged here first so that a
   * deferred outbox waits without trying): if not, the deferral is recorded (once) and the lane waits for the window.
   * Inside quiet hours that let replies go, a queued reply goes first.
   */
  private async paced(
    outbox: DeviceOutbox,
    outboxId: string,
  ): Promise<
    { kind: 'go'; outboxId: string; pacing: PacingContext | undefined } | { kind: 'deferred'; until: number }
  > {
    const { pacing: pacingOf } = this.drainer.deps;
    const head = outbox.current.messages.get(outboxId);
    if (!pacingOf || !head || head.attempts > 0) return { kind: 'go', outboxId, pacing: undefined };
    const pacing = await pacingOf(this.deviceId, head.to);
    if (!pacing) return { kind: 'go', outboxId, pacing };
    const now = this.drainer.now();
    const verdict = pacingWindow(pacing, now, (since) => outbox.current.sendsSince(since));
    if (verdict.go) return { kind: 'go', outboxId, pacing };
    if (verdict.reason === 'quiet_hours' && pacing.policy.quietHours?.allowReplies) {
      const reply = await this.queuedReply(outbox, now);
      if (reply) return { kind: 'go', ...reply };
    }
    // The decider records the deferral (once) and answers when the window opens. It never starts the try: should
    // the stream say the window is open (it opened meanwhile, another process's count differs), the message goes
    // the usual way, through the rate limiter, with its spacing, waited for at stop.
    const deferred = await this.record(outbox, {
      type: 'DeferSending',
      deviceId: this.deviceId,
      outboxId,
      now: this.drainer.now(),
      pacing,
    });
    const outcome = deferred.result;
    return outcome.action === 'go' ? { kind: 'go', outboxId, pacing } : { kind: 'deferred', until: outcome.until };
  }

  /** The first queued message (not yet tried) to a number that wrote in the last 24 h, with its pacing. */
  private async queuedReply(
    outbox: DeviceOutbox,
    now: number,
  ): Promise<{ outboxId: string; pacing: PacingContext } | undefined> {
    const { pacing: pacingOf } = this.drainer.deps;
    // Looked up once per recipient: a queue to one number asks once, not once per message.
    const byRecipient = new Map<string, PacingContext | undefined>();
    let scanned = 0;
    // The live map, not a copy: a message that leaves meanwhile is skipped, one queued meanwhile may be seen.
    for (const message of outbox.current.messages.values()) {
      if (scanned++ >= REPLY_SCAN) return undefined;
      if (message.status !== 'queued' || message.attempts > 0 || message.retryAt > now) continue;
      if (!byRecipient.has(message.to)) byRecipient.set(message.to, await pacingOf!(this.deviceId, message.to));
      const pacing = byRecipient.get(message.to);
      if (pacing && isReply(pacing, now) && pacingWindow(pacing, now, (since) => outbox.current.sendsSince(since)).go)
        return { outboxId: message.outboxId, pacing };
    }
    return undefined;
  }

  /** Records a decision of this lane, under the device's lease when there are several processes. */
  private record<C extends OutboxCommand>(outbox: DeviceOutbox, command: C): Promise<Executed<OutboxResultOf<C>>> {
    const { fences } = this.drainer.deps;
    if (!fences) return outbox.execute(command);
    const current = fences.fence(this.deviceId);
    if (!current) {
      return Promise.reject(new Error(`device ${this.deviceId} is no longer run by this process`));
    }
    return outbox.execute(command, current).catch((error: unknown) => {
      if (error instanceof FenceRejectedError) fences.fenceRejected(this.deviceId, error);
      throw error;
    });
  }

  /** Tries the message (pacing may still defer it: the lane judges the window again when it wakes). */
  private async send(outbox: DeviceOutbox, outboxId: string, pacing?: PacingContext): Promise<void> {
    const { connections, dispatcher } = this.drainer.deps;
    if (this.sentUnrecorded.has(outboxId)) {
      const message = outbox.current.messages.get(outboxId);
      await this.recordSent(outbox, outboxId);
      if (message) await this.keepMedia(message);
      return;
    }
    const connection = connections.connection(this.deviceId);
    if (!connection || this.stopped) return;
    const { deviceId } = this;
    const start = (
      await this.record(outbox, {
        type: 'StartSending',
        deviceId,
        outboxId,
        now: this.drainer.now(),
        ...(pacing ? { pacing } : {}),
      })
    ).result;
    if (start.action === 'defer' || start.action === 'skip') return;
    if (start.action === 'confirm') {
      // A receipt showed it was sent: recorded `sent` now, its media kept like any sent message's.
      await this.keepMedia(start.message);
      return;
    }
    if (start.action === 'expired') {
      await this.removeMedia(start.message);
      return;
    }
    const message = start.message;
    if (pacing?.policy.typing && message.content.kind === 'text') {
      // The contact sees "typing…" for a time that grows with the text, then the text.
      await connection
        .sendPresence?.('typing', message.to)
        .catch((error: unknown) => this.drainer.deps.log.debug({ err: error, deviceId }, 'typing not shown'));
      await this.sleep(typingMs(message.content.text.length), false);
    }
    try {
      await dispatcher.send(connection, this.deviceId, message);
    } catch (error) {
      await this.sendFailed(outbox, connection, message, error);
      return;
    }
    this.sentUnrecorded.add(outboxId);
    await this.recordSent(outbox, outboxId);
    await this.keepMedia(message);
  }

  private async recordSent(outbox: DeviceOutbox, outboxId: string): Promise<void> {
    await this.record(outbox, { type: 'RecordSent', deviceId: this.deviceId, outboxId, now: this.drainer.now() });
    this.sentUnrecorded.delete(outboxId);
  }

  private async sendFailed(
    outbox: DeviceOutbox,
    connection: EngineConnection,
    message: PendingMessage,
    error: unknown,
  ): Promise<void> {
    const { settings, log } = this.drainer.deps;
    const now = this.drainer.now();
    const failure = this.classify(connection, error);
    log.debug(
      { deviceId: this.deviceId, outboxId: message.outboxId, error: failure.error, kind: failure.kind },
      'send failed',
    );
    if (
      failure.kind === 'permanent' ||
      (failure.kind === 'transient' && message.failures + 1 >= settings.maxAttempts)
    ) {
      await this.record(outbox, {
        type: 'RecordFailed',
        deviceId: this.deviceId,
        outboxId: message.outboxId,
        error: failure.error,
        now,
      });
      await this.removeMedia(message);
      return;
    }
    const counted = failure.kind === 'transient';
    const retryAt = counted ? now + retryDelayMs(message.failures + 1, settings, this.drainer.random) : now;
    await this.record(outbox, {
      type: 'RecordAttemptFailed',
      deviceId: this.deviceId,
      outboxId: message.outboxId,
      error: failure.error,
      counted,
      retryAt,
    });
  }

  private async revoke(outbox: DeviceOutbox, waMessageId: string): Promise<void> {
    const { connections, dispatcher, settings } = this.drainer.deps;
    const connection = connections.connection(this.deviceId);
    const revoke = outbox.current.revokes.get(waMessageId);
    if (!connection || !revoke || this.stopped) return;
    try {
      await dispatcher.revoke(connection, waMessageId, revoke.to);
    } catch (error) {
      const now = this.drainer.now();
      const failure = this.classify(connection, error);
      const counted = failure.kind !== 'offline';
      const final = failure.kind === 'permanent' || (counted && revoke.attempts + 1 >= settings.maxAttempts);
      const retryAt = counted ? now + retryDelayMs(revoke.attempts + 1, settings, this.drainer.random) : now;
      await this.record(outbox, {
        type: 'RecordRevokeFailed',
        deviceId: this.deviceId,
        waMessageId,
        error: failure.error,
        final,
        retryAt,
        counted,
      });
      return;
    }
    await this.record(outbox, { type: 'RecordRevoked', deviceId: this.deviceId, waMessageId, now: this.drainer.now() });
  }

  /** permanent: fail now; transient: retry with backoff (uses an attempt); offline: retry once online again. */
  private classify(
    connection: EngineConnection,
    error: unknown,
  ): { kind: 'permanent' | 'transient' | 'offline'; error: OutboxError } {
    if (error instanceof MediaUnavailableError)
      return { kind: 'permanent', error: { code: error.code, message: error.message, reason: error.reason } };
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof EngineError) {
      // The engine's media_unavailable is a stored file it cannot read.
      if (error.permanent)
        return {
          kind: 'permanent',
          error: {
            code: error.code,
            message,
            ...(error.code === 'media_unavailable' ? { reason: 'missing_file' } : {}),
          },
        };
      if (error.code === 'not_connected') return { kind: 'offline', error: { code: error.code, message } };
    }
    // The session dropped while the engine was busy: not the message's fault.
    if (this.drainer.deps.connections.connection(this.deviceId) !== connection)
      return { kind: 'offline', error: { code: 'not_connected', message } };
    return { kind: 'transient', error: { code: error instanceof EngineError ? error.code : 'engine_error', message } };
  }

  private async removeMedia(message: PendingMessage): Promise<void> {
    const { media, log } = this.drainer.deps;
    if (mediaOf(message.content)?.source !== 'stored') return;
    // A file left behind is removed by the sweep at the next start.
    await media
      .remove(this.deviceId, message.outboxId)
      .catch((error: unknown) => log.warn({ err: error, deviceId: this.deviceId }, 'media file not removed'));
  }

  /**
   * After `sent` is recorded (never before: a message whose outcome is not recorded is still in the outbox and
   * needs its file there). Moves the file to the received media, where the message index's `media_stored_at`
   * (set by that `sent`) has the retention sweep remove it; a failure is logged, never thrown (the message was sent).
   */
  private async keepMedia(message: PendingMessage): Promise<void> {
    const { media, log } = this.drainer.deps;
    if (mediaOf(message.content)?.source !== 'stored') return;
    try {
      const kept = await media.keepSent(this.deviceId, message.outboxId, message.waMessageId);
      if (kept === 'missing')
        log.warn({ deviceId: this.deviceId, outboxId: message.outboxId }, 'sent media not kept: its file is gone');
      else if (kept === 'copied')
        log.debug(
          { deviceId: this.deviceId, outboxId: message.outboxId },
          'sent media copied to the received media (another file system)',
        );
    } catch (error) {
      log.warn(
        { err: error, deviceId: this.deviceId, outboxId: message.outboxId },
        'sent media not kept: a forward of it will answer 410',
      );
    }
  }

  private sleep(ms: number, interruptible: boolean): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const { clock } = this.drainer;
      const done = () => {
        clock.clear(timer);
        if (this.interrupt === done) this.interrupt = undefined;
        resolve();
      };
      const timer = clock.setTimeout(done, ms);
      // A wake cuts a backoff wait short (the head may have changed); the spacing pause only ends early on stop.
      this.interrupt = interruptible ? done : () => this.stopped && done();
    });
  }
}
