/**
 * The webhooks module, wired: its read model fed by its own checkpointed subscription (a ProjectionRunner
 * of its own, so webhook work never slows the API's read-your-writes), the dispatcher working off the
 * pending deliveries, the hook commands, the deliveries log and the test event.
 */
import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import type { WebhookSettings } from '../config.js';
import { CommandHandler } from '../commands/command-handler.js';
import type { DeviceCommands } from '../devices/device-registry.js';
import { deterministicEventId } from '../eventstore/event-id.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { OutboundGuard } from '../net/outbound-guard.js';
import { DEFAULT_WAIT_TIMEOUT_MS, ProjectionRunner, type ReadModelFeed } from '../projections/projection-runner.js';
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';
import { DeliveryDispatcher } from './delivery-dispatcher.js';
import { DeliveryLog } from './delivery-log.js';
import { DeliveryQueue } from './delivery-queue.js';
import { testEnvelope } from './envelope.js';
import type { DeliveryEvent } from './delivery-events.js';
import { type DeliveryLaneCommand, type DeliveryLaneState, deliveryLaneDecider } from './delivery-lane-decider.js';
import { HookSecrets } from './hook-secrets.js';
import { HookSettings, hooksNotConfigured } from './hook-settings.js';
import { webhookNotFound } from './webhook-settings-decider.js';
import { GLOBAL_SCOPE } from './webhook-settings-events.js';
import { WebhookRegistry, createWebhookSettingsCommands } from './webhook-registry.js';
import { RetryPolicy } from './retry-policy.js';
import { UNREACHABLE, WebhookSender } from './webhook-sender.js';
import { WebhooksReadModel } from './webhooks-read-model.js';

const PRUNE_EVERY_MS = 3_600_000;

export interface WebhooksOptions {
  settings: WebhookSettings;
  store: EventStore;
  /** The read-model database (read-models.sqlite); the webhooks tables and checkpoint live there too. */
  readModelDb: Database.Database;
  /** The one writer of the devices' registry streams, where hook configurations live. */
  deviceCommands: DeviceCommands;
  /** ENCRYPTION_KEY: signing secrets are sealed with it in the log and the read model. */
  encryptionKey: Uint8Array | undefined;
  guard: OutboundGuard;
  log: Logger;
  /** Several processes: only the lanes of the devices this process runs are worked off here. */
  owns?: (deviceId: string) => boolean;
  /** When retries are due and records old enough to prune (default: the system clock). */
  clock?: Clock;
  /**
   * GATEWAY_PROCESSES: the machine's projector feeds (and prunes) the webhooks read model; this process follows
   * its position and is told of devices with work (src/projections/projector-link.ts).
   */
  followed?: {
    feed: ReadModelFeed;
    onWork(wake: (deviceId: string, webhookId: string, rewound: boolean) => void): void;
  };
}

export interface TestEventResult {
  delivered: boolean;
  status?: number;
  durationMs: number;
  error?: string;
}

/** The one writer of the devices' delivery streams (`webhooks-<deviceId>`). */
export type DeliveryLaneCommands = CommandHandler<DeliveryLaneState, DeliveryLaneCommand, DeliveryEvent>;

/** Lanes whose state stays in memory between attempts (each is a few dozen keys). */
const LANE_STATES_KEPT = 10_000;
/**
 * A lane's stream gains an event per attempt and is never trimmed: without snapshots, its first command after
 * a start (or after its state left the cache) read every attempt the device ever had, in time and memory
 * growing with them (docs/notes/performance.md).
 */
export const LANE_SNAPSHOT_EVERY = 500;

export function createDeliveryLaneCommands(store: EventStore): DeliveryLaneCommands {
  return new CommandHandler({
    store,
    decider: deliveryLaneDecider,
    cacheSize: LANE_STATES_KEPT,
    snapshots: { every: LANE_SNAPSHOT_EVERY },
    // Deterministic attempt ids: the store drops an attempt appended twice, as the decider does.
    eventIds: (events) =>
      events.map((event) =>
        event.type === 'WebhookDeliveryAttempted'
          ? deterministicEventId(
              event.data.webhookId === undefined
                ? `webhook-attempt:${event.data.deliveryId}:${event.data.attempt}`
                : `webhook-attempt:${event.data.webhookId}:${event.data.deliveryId}:${event.data.attempt}`,
            )
          : undefined,
      ),
  });
}

export class Webhooks {
  readonly hooks: HookSettings;
  /** Every webhook of a device (its hook as `default`) and the global ones. */
  readonly webhooks: WebhookRegistry;
  readonly deliveries: DeliveryLog;

  private constructor(
    private readonly runner: ReadModelFeed,
    private readonly model: WebhooksReadModel,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly queue: DeliveryQueue,
    private readonly sender: WebhookSender,
    private readonly pruner: ClockTimer | undefined,
    private readonly clock: Clock,
    private readonly log: Logger,
    lanes: DeliveryLaneCommands,
    deviceCommands: DeviceCommands,
    secrets: HookSecrets,
    settingsWriter: ReturnType<typeof createWebhookSettingsCommands>,
  ) {
    this.hooks = new HookSettings(deviceCommands, runner, model, secrets);
    this.webhooks = new WebhookRegistry(settingsWriter, this.hooks, runner, model, secrets);
    this.deliveries = new DeliveryLog(lanes, runner, model);
  }

  /** Catches up with the log (deliveries due while the gateway was down included), then starts delivering. */
  static async start(options: WebhooksOptions): Promise<Webhooks> {
    const { settings, store, readModelDb, guard, log, deviceCommands } = options;
    const clock = options.clock ?? systemClock;
    const secrets = new HookSecrets(options.encryptionKey);
    const model = new WebhooksReadModel(readModelDb, secrets);
    const runner =
      options.followed?.feed ??
      new ProjectionRunner(
        store,
        readModelDb,
        [model],
        log.child({ component: 'webhooks' }),
        DEFAULT_WAIT_TIMEOUT_MS,
        clock,
      );
    const queue = new DeliveryQueue({
      concurrency: settings.concurrency,
      hostRatePerSecond: settings.hostRatePerSecond,
    });
    const sender = new WebhookSender(guard, settings.timeoutMs);
    const policy = new RetryPolicy(settings.retrySchedule, settings.retryJitter);
    const lanes = createDeliveryLaneCommands(store);
    const dispatcher = new DeliveryDispatcher({
      lanes,
      store,
      runner,
      model,
      queue,
      sender,
      policy,
      log,
      clock,
      ...(options.owns ? { owns: options.owns } : {}),
    });
    const wake = (deviceId: string, webhookId: string, rewound: boolean) =>
      dispatcher.wake(deviceId, webhookId, rewound);
    if (options.followed) options.followed.onWork(wake);
    else model.onWork = wake;
    await runner.start();
    const prune = () => {
      const removed = model.prune(clock.now() - settings.retentionMs);
      if (removed > 0) log.info({ removed }, 'pruned old webhook delivery records');
    };
    // The projector prunes the file it writes.
    if (!options.followed) prune();
    const pruner = options.followed ? undefined : clock.setInterval(prune, PRUNE_EVERY_MS).unref();
    dispatcher.start();
    return new Webhooks(
      runner,
      model,
      dispatcher,
      queue,
      sender,
      pruner,
      clock,
      log,
      lanes,
      deviceCommands,
      secrets,
      createWebhookSettingsCommands(store),
    );
  }

  /**
   * POST /hooks/test: one attempt, now, outside the queue and the deliveries log. No answer is `unreachable`
   * to the caller; why (host not found, refused…) goes to the gateway log, the admin's.
   */
  async sendTest(deviceId: string): Promise<TestEventResult> {
    const hook = this.model.hook(deviceId);
    if (!hook) throw hooksNotConfigured(deviceId);
    return this.test(hook, deviceId, undefined);
  }

  /**
   * POST …/webhooks/:webhookId/test, as sendTest: of a device's webhook, or (`deviceId` undefined) of a global
   * one, whose test event names no device (`deviceId: "*"`).
   */
  async sendWebhookTest(deviceId: string | undefined, webhookId: string): Promise<TestEventResult> {
    const webhook = this.model.webhook(deviceId ?? GLOBAL_SCOPE, webhookId);
    if (!webhook)
      throw deviceId !== undefined && webhookId === 'default'
        ? hooksNotConfigured(deviceId)
        : webhookNotFound(webhookId);
    return this.test(webhook, deviceId, webhookId);
  }

  private async test(
    target: { url: string; secret: string },
    deviceId: string | undefined,
    webhookId: string | undefined,
  ): Promise<TestEventResult> {
    const envelope = testEnvelope(deviceId ?? '*');
    const result = await this.sender.send(target, { id: envelope.id, payload: JSON.stringify(envelope) });
    const unreachable = result.status === undefined && result.error !== undefined;
    if (unreachable)
      this.log.warn({ deviceId, webhookId, reason: result.error }, 'webhook test: the receiver was unreachable');
    return {
      delivered: result.delivered,
      ...(result.status === undefined ? {} : { status: result.status }),
      durationMs: result.durationMs,
      ...(result.error === undefined ? {} : { error: unreachable ? UNREACHABLE : result.error }),
    };
  }

  /**
   * The projector changed a scope's webhooks (a device's, or `_global`: the global ones; src/projections/projector-link.ts):
   * their cached views go.
   */
  forgetHook(scope: string): void {
    this.model.forget(scope);
  }

  /** This process now runs the device (several processes): work off what is pending for it, in each of its lanes. */
  wake(deviceId: string): void {
    this.dispatcher.wakeDevice(deviceId);
  }

  /** Resolves once the webhooks read model includes the event at `position`. */
  waitFor(position: number): Promise<void> {
    return this.runner.waitFor(position);
  }

  async stop(): Promise<void> {
    if (this.pruner) this.clock.clear(this.pruner);
    await this.dispatcher.stop();
    this.queue.close();
    await this.runner.stop();
  }
}
