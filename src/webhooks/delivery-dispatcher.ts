/**
 * Works off the pending deliveries of the webhooks read model. Each webhook and device is a lane (a device's
 * hook, each of its further webhooks, and each global webhook once per device): the lane's oldest pending
 * delivery goes first and the next only once that one is delivered or failed for good, so a device's events
 * arrive at each webhook in order; lanes run side by side through the delivery queue, each with its own retry
 * schedule, so a slow or dead receiver holds up only its own lane. Each attempt's outcome is durable before the lane moves on: a restart resumes from the log,
 * same webhook-id (invariants 2 and 5; docs/architecture.md, "Webhooks").
 */
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/event-store.js';
import type { ReadModelFeed } from '../projections/projection-runner.js';
import { maskUrlCredentials, maskUrlsIn } from '../secrets/url-credentials.js';
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';
import { type WebhookDeliveryAttemptedData, webhooksStream } from './delivery-events.js';
import type { DeliveryQueue } from './delivery-queue.js';
import { HookSecretUnreadableError } from './hook-secrets.js';
import type { RetryPolicy } from './retry-policy.js';
import type { WebhookSender, WebhookTarget } from './webhook-sender.js';
import type { DeliveryLaneCommands } from './webhooks.js';
import { DEFAULT_WEBHOOK_ID } from './webhook-settings-events.js';
import type { LaneId, PendingDelivery, WebhooksReadModel } from './webhooks-read-model.js';

const laneKey = (deviceId: string, webhookId: string) => `${webhookId} ${deviceId}`;

/** After an unexpected error (the store unavailable…), a lane tries again this much later. */
const LANE_ERROR_BACKOFF_MS = 1_000;
/** How often a lane whose hook secret cannot be opened looks again. */
const UNREADABLE_SECRET_BACKOFF_MS = 60_000;
/** Pending deliveries a lane reads from the read model at a time (one query for this many deliveries). */
const READ_AHEAD = 32;
/** Hook URLs whose host is kept parsed; a handful is the usual working set. */
const MAX_CACHED_HOSTS = 1_000;

interface Lane {
  id: LaneId;
  running: boolean;
  timer: ClockTimer | undefined;
  /**
   * Deliveries whose final attempt is durable in the store but maybe not yet folded into the read model
   * (id → position of that record, and the round it decided): the lane goes on to the next one without
   * waiting for the fold. A delivery retried meanwhile is in a later round, which that attempt does not end.
   */
  settling: Map<string, { position: number; round: number }>;
  /** Pending deliveries read ahead, in the device's order; the first is the head. Fresh objects: the lane's own. */
  ahead: PendingDelivery[];
  /** seq of the last delivery read ahead: the next read starts after it. Undefined: from the oldest pending. */
  cursor: number | undefined;
  /**
   * The hook configuration `ahead` was read under. The read model opens a configuration once and keeps that
   * object until it changes (webhooks-read-model.ts, forgetHook), so another object means the hook was removed
   * (which ended what was pending) or configured again since.
   */
  readUnder: WebhookTarget | undefined;
}

export interface DispatcherDeps {
  /** The delivery streams' one writer (webhooks.ts). */
  lanes: DeliveryLaneCommands;
  /** Where the lane writer appends: read when an attempt turns out to be recorded already. */
  store: Pick<EventStore, 'readStream'>;
  /** The runner that feeds `model`: its position tells when a recorded attempt is visible. */
  runner: ReadModelFeed;
  model: WebhooksReadModel;
  queue: DeliveryQueue;
  sender: WebhookSender;
  policy: RetryPolicy;
  log: Logger;
  /** Several processes: whether this process runs the device (only its owner works its lane off). */
  owns?: (deviceId: string) => boolean;
  /** When a retry is due (default: the system clock). */
  clock?: Clock;
}

export class DeliveryDispatcher {
  private readonly lanes = new Map<string, Lane>();
  /**
   * The lanes whose latest attempt failed, with the webhook URL it failed on: the operator is told of a failing
   * receiver once (a retry of the same streak says nothing new), and once when it takes deliveries again. Kept
   * apart from the lanes, which are forgotten while idle (between a failure for good and the next event).
   */
  private readonly failing = new Map<string, string>();
  private readonly running = new Set<Promise<void>>();
  private readonly hosts = new Map<string, string>();
  private started = false;
  private stopped = false;
  private readonly clock: Clock;

  constructor(private readonly deps: DispatcherDeps) {
    this.clock = deps.clock ?? systemClock;
  }

  /** Starts every lane that has something pending (after a restart: what was left). */
  start(): void {
    this.started = true;
    for (const { deviceId, webhookId } of this.deps.model.lanesWithPending()) this.wake(deviceId, webhookId);
  }

  /** Starts every lane of the device that has something pending (this process now runs the device). */
  wakeDevice(deviceId: string): void {
    for (const webhookId of this.deps.model.webhooksWithPending(deviceId)) this.wake(deviceId, webhookId);
  }

  /**
   * Something may be due for this lane: start it unless it is already working. `rewound`: a delivery older than
   * the lane's cursor is pending again (a retry was requested), so the lane reads from the oldest.
   */
  wake(deviceId: string, webhookId: string = DEFAULT_WEBHOOK_ID, rewound = false): void {
    if (!this.started || this.stopped) return;
    if (this.deps.owns && !this.deps.owns(deviceId)) return;
    const key = laneKey(deviceId, webhookId);
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = {
        id: { deviceId, webhookId },
        running: false,
        timer: undefined,
        settling: new Map(),
        ahead: [],
        cursor: undefined,
        readUnder: undefined,
      };
      this.lanes.set(key, lane);
    }
    if (rewound) rewind(lane);
    if (lane.running) return; // it reads on after every attempt: what is new comes after its cursor
    this.clock.clear(lane.timer);
    lane.timer = undefined;
    lane.running = true;
    const run = this.drain(key, lane);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /** Stops taking work, cuts attempts in flight short (unrecorded: they go again after a restart) and waits for the lanes. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.deps.sender.abortAll();
    for (const lane of this.lanes.values()) this.clock.clear(lane.timer);
    await Promise.allSettled([...this.running]);
    this.lanes.clear();
  }

  private async drain(key: string, lane: Lane): Promise<void> {
    const { deviceId, webhookId } = lane.id;
    try {
      for (;;) {
        if (this.stopped || (this.deps.owns && !this.deps.owns(deviceId))) return;
        const head = this.head(lane);
        if (!head) return;
        const hook = this.deps.model.target(deviceId, webhookId);
        if (!hook) return; // removed meanwhile: the read model has already failed what was pending
        if (hook !== lane.readUnder) {
          // Read ahead before the hook was removed (those deliveries ended then) and configured again: read again.
          rewind(lane);
          continue;
        }
        const wait = head.nextAttemptAt - this.clock.now();
        if (wait > 0) {
          lane.timer = this.timer(key, wait);
          return;
        }
        await this.attempt(head, hook, lane);
      }
    } catch (error) {
      // A secret no key here opens waits for the operator (the gateway restarted with the right ENCRYPTION_KEY):
      // its deliveries stay pending, and the lane looks again now and then rather than every second.
      const unreadable = error instanceof HookSecretUnreadableError;
      this.deps.log.error(
        { err: error, deviceId, webhookId },
        unreadable ? 'webhook secret unreadable; deliveries wait' : 'webhook delivery lane failed; retrying shortly',
      );
      lane.timer = this.timer(key, unreadable ? UNREADABLE_SECRET_BACKOFF_MS : LANE_ERROR_BACKOFF_MS);
    } finally {
      // What was read ahead may be stale by the time the lane runs again (delivered by another process that
      // ran the device meanwhile, ended by a hook removal, or retried): it starts again from the oldest pending.
      rewind(lane);
      lane.running = false;
      if (!lane.timer && this.settle(lane) === 0) this.lanes.delete(key);
    }
  }

  /**
   * The device's oldest pending delivery, passing over those whose outcome the read model has yet to fold.
   * Read READ_AHEAD at a time: after the cursor (new deliveries always come after it: seq is the log
   * position), or from the oldest pending when the lane was rewound.
   */
  private head(lane: Lane): PendingDelivery | undefined {
    if (lane.ahead.length > 0) return lane.ahead[0];
    const { model } = this.deps;
    const unsettled = this.settle(lane);
    lane.ahead =
      lane.cursor !== undefined
        ? model.pendingAfter(lane.id, lane.cursor, READ_AHEAD)
        : model
            .pendingHeads(lane.id, unsettled + READ_AHEAD)
            .filter((delivery) => lane.settling.get(delivery.id)?.round !== delivery.round);
    if (lane.ahead.length > 0) lane.cursor = lane.ahead[lane.ahead.length - 1].seq;
    lane.readUnder = model.target(lane.id.deviceId, lane.id.webhookId);
    return lane.ahead[0];
  }

  /** Forgets what the read model now includes; answers how many are still settling. */
  private settle(lane: Lane): number {
    for (const [id, { position }] of lane.settling) if (position <= this.deps.runner.position) lane.settling.delete(id);
    return lane.settling.size;
  }

  private async attempt(head: PendingDelivery, hook: WebhookTarget, lane: Lane): Promise<void> {
    const { queue, sender, policy, lanes, runner } = this.deps;
    const result = await queue.run(this.hostOf(hook.url), () =>
      this.stopped ? Promise.resolve(undefined) : sender.send(hook, head),
    );
    if (!result || this.stopped) {
      rewind(lane);
      return;
    }
    const now = this.clock.now();
    const decision = policy.decide(result, head, now);
    const attempt = head.attempts + 1;
    const recorded: WebhookDeliveryAttemptedData = {
      deviceId: head.deviceId,
      ...(head.webhookId === DEFAULT_WEBHOOK_ID ? {} : { webhookId: head.webhookId }),
      deliveryId: head.id,
      round: head.round,
      attempt,
      outcome: decision.outcome,
      ...(result.status === undefined ? {} : { status: result.status }),
      ...(result.error === undefined ? {} : { error: result.error }),
      durationMs: result.durationMs,
      attemptedAt: new Date(now).toISOString(),
      ...(decision.nextAttemptAt === undefined
        ? {}
        : { nextAttemptAt: new Date(decision.nextAttemptAt).toISOString() }),
    };
    // Durable before the next delivery of the device goes out: a crash cannot reorder what was sent.
    const stream = webhooksStream(head.deviceId);
    const handled = await lanes.handle(stream, { type: 'RecordAttempt', attempt: recorded });
    if (handled.position === 0) {
      // Nothing appended: this attempt number is in the stream already (recorded by the device's previous owner
      // before this process's read model folded it, or by an append that landed although it failed). That record
      // decides, not this one: the lane reads its head again once the read model includes the whole stream, so
      // that record's backoff holds and its outcome is not taken for this one.
      rewind(lane);
      await runner.waitFor(await this.positionOf(stream, handled.revision));
      return;
    }
    this.logStreak(head, hook, recorded);
    const position = handled.position;
    // A retry is timed from the read model's next_attempt_at, so that one waits for the fold, and the lane
    // reads its head again; otherwise the lane goes on with the next one read ahead.
    if (decision.outcome === 'retrying') {
      rewind(lane);
      await runner.waitFor(position);
    } else {
      lane.settling.set(head.id, { position, round: head.round });
      if (lane.ahead[0] === head) lane.ahead.shift();
    }
  }

  /**
   * Logs the first failed attempt of a lane's streak at warn (retries of it at debug) and, once a delivery
   * succeeds again, that the lane recovered. A streak is one receiver's: a failure on another hook URL starts one.
   */
  private logStreak(head: PendingDelivery, hook: WebhookTarget, attempt: WebhookDeliveryAttemptedData): void {
    const { log } = this.deps;
    const { deviceId, webhookId } = head;
    const key = laneKey(deviceId, webhookId);
    const failingOn = this.failing.get(key);
    if (attempt.outcome === 'delivered') {
      if (failingOn === undefined) return;
      this.failing.delete(key);
      log.info({ deviceId, webhookId, url: maskUrlCredentials(hook.url) }, 'webhook deliveries succeed again');
      return;
    }
    const details = {
      deviceId,
      webhookId,
      url: maskUrlCredentials(hook.url),
      deliveryId: head.id,
      attempt: attempt.attempt,
      outcome: attempt.outcome,
      ...(attempt.status === undefined ? {} : { status: attempt.status }),
      ...(attempt.error === undefined ? {} : { error: maskUrlsIn(attempt.error) }),
      ...(attempt.nextAttemptAt === undefined ? {} : { nextAttemptAt: attempt.nextAttemptAt }),
    };
    if (failingOn === hook.url) {
      log.debug(details, 'webhook delivery failed again');
      return;
    }
    this.failing.set(key, hook.url);
    log.warn(
      details,
      attempt.outcome === 'retrying'
        ? 'webhook delivery failed; retrying (logged once until deliveries to this hook succeed again)'
        : 'webhook delivery failed for good (logged once until deliveries to this hook succeed again)',
    );
  }

  /** The log position of a stream's event at `revision`. */
  private async positionOf(streamId: string, revision: number): Promise<number> {
    const [event] = await this.deps.store.readStream(streamId, { fromRevision: revision, maxCount: 1 });
    return event?.position ?? this.deps.runner.position;
  }

  /** The delivery queue's key of a hook URL (host:port), parsed once per URL. */
  private hostOf(url: string): string {
    let host = this.hosts.get(url);
    if (host === undefined) {
      if (this.hosts.size >= MAX_CACHED_HOSTS) this.hosts.clear();
      host = new URL(url).host;
      this.hosts.set(url, host);
    }
    return host;
  }

  private timer(key: string, ms: number): ClockTimer {
    // setTimeout holds at most ~24.8 days; a longer wait simply wakes early and waits again.
    return this.clock
      .setTimeout(
        () => {
          const lane = this.lanes.get(key);
          if (!lane) return;
          lane.timer = undefined;
          this.wake(lane.id.deviceId, lane.id.webhookId);
        },
        Math.min(ms, 2_000_000_000),
      )
      .unref();
  }
}

/** The lane forgets what it read ahead and reads from the oldest pending delivery next. */
function rewind(lane: Lane): void {
  lane.ahead = [];
  lane.cursor = undefined;
}
