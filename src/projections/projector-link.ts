/**
 * GATEWAY_PROCESSES=N: one projector per machine (src/cluster/machine-projector.ts, in the node:cluster primary)
 * writes the read models every process serves from; a worker opens the same file and follows the projector's
 * position, told over the IPC channel node:cluster opened, instead of projecting every event itself. A request
 * still waits until the read models include its append (read-your-writes): its waiter is released when the
 * projector says it got there.
 */
import type { Logger } from 'pino';
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';
import { DEFAULT_WAIT_TIMEOUT_MS, ProjectionLagError, type ReadModelFeed } from './projection-runner.js';

/** What the projector tells its workers after each committed batch (coalesced), and in answer to a hello. */
export interface ProjectedMessage {
  dmg: 'projected';
  /** The main runner's position (every read model the API serves from). */
  main: number;
  /** The webhooks runner's position. */
  webhooks: number;
  /** A runner's last batch failed and none has succeeded since (the read models' disk is full, say). */
  failing: boolean;
  /** Lanes (device, webhook) with something new to deliver (WebhooksReadModel.onWork), and whether older records came back. */
  work: Array<[deviceId: string, webhookId: string, rewound: boolean]>;
}

/**
 * What the read models changed in a batch, by model and key (a device id, a webhook scope such as `_global`, a key
 * hash): each worker drops its cached views of those keys. Sent just before the `projected` message of the same
 * batch (the channel keeps the order), so a request released by that message reads the rows as committed.
 */
export interface ChangedMessage {
  dmg: 'changed';
  keys: Array<[model: string, key: string]>;
}

/** A worker's uses of scoped keys (hash, ms), for the projector to record (a worker writes no key usage itself). */
export interface KeyUseMessage {
  dmg: 'key-use';
  uses: Array<[keyHash: string, at: number]>;
}

/** A worker asks for the projector's status when it starts (messages sent before it listened are lost). */
export interface HelloMessage {
  dmg: 'projector-hello';
}

export const isProjectedMessage = (message: unknown): message is ProjectedMessage =>
  typeof message === 'object' && message !== null && (message as { dmg?: unknown }).dmg === 'projected';

export const isChangedMessage = (message: unknown): message is ChangedMessage =>
  typeof message === 'object' && message !== null && (message as { dmg?: unknown }).dmg === 'changed';

export const isKeyUseMessage = (message: unknown): message is KeyUseMessage =>
  typeof message === 'object' && message !== null && (message as { dmg?: unknown }).dmg === 'key-use';

export const isHelloMessage = (message: unknown): message is HelloMessage =>
  typeof message === 'object' && message !== null && (message as { dmg?: unknown }).dmg === 'projector-hello';

interface Waiter {
  position: number;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: ClockTimer;
}

/** One runner of the projector, as a worker sees it: its position, and waits for it. */
export class FollowedProjections implements ReadModelFeed {
  position = 0;
  failing = false;
  private waiters: Waiter[] = [];

  constructor(
    private readonly link: ProjectorLink,
    private readonly log: Logger,
    private readonly waitTimeoutMs = DEFAULT_WAIT_TIMEOUT_MS,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Resolves once the projector has caught up with the log (it says so in its first answer). */
  start(): Promise<void> {
    return this.link.start();
  }

  /** Stops following; the requests still waiting are answered with a lag (their timers go with them). */
  async stop(): Promise<void> {
    this.link.stop();
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      this.clock.clear(waiter.timer);
      waiter.reject(new ProjectionLagError(`stopped before the read models reached position ${waiter.position}`));
    }
    return Promise.resolve();
  }

  rebuild(): Promise<{ events: number; seconds: number }> {
    return Promise.reject(new Error('the read models are rebuilt by the machine projector, not by a worker'));
  }

  waitFor(position: number): Promise<void> {
    if (this.position >= position) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        reject(
          new ProjectionLagError(`read models did not reach position ${position} within ${this.waitTimeoutMs} ms`),
        );
      }, this.waitTimeoutMs);
      this.waiters.push({ position, resolve, reject, timer });
    });
  }

  async settle(position: number): Promise<boolean> {
    try {
      await this.waitFor(position);
      return true;
    } catch (error) {
      if (!(error instanceof ProjectionLagError)) throw error;
      this.log.warn({ position, err: error }, 'read models lag behind a write that succeeded; answering without them');
      return false;
    }
  }

  /** The projector got to `position`. */
  advance(position: number, failing: boolean): void {
    this.failing = failing;
    if (position <= this.position) return;
    this.position = position;
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.position <= position) {
        this.clock.clear(waiter.timer);
        waiter.resolve();
      } else still.push(waiter);
    }
    this.waiters = still;
  }
}

/** The IPC side of a worker: a hello at start, then every `projected` message handed to its followers. */
export interface ProjectorChannel {
  send(message: HelloMessage | KeyUseMessage): void;
  onMessage(listener: (message: unknown) => void): () => void;
}

/** node:cluster's channel to the primary (a worker only). */
export const primaryChannel = (): ProjectorChannel => ({
  send: (message) => {
    process.send?.(message);
  },
  onMessage: (listener) => {
    process.on('message', listener);
    return () => process.off('message', listener);
  },
});

/**
 * How long a worker waits for the projector's first answer (it comes once the projector has caught up with the
 * log, a rebuild included) before it gives up; the primary then starts it again, and it says hello again.
 */
export const PROJECTOR_START_TIMEOUT_MS = 600_000;

export class ProjectorLink {
  readonly main: FollowedProjections;
  readonly webhooks: FollowedProjections;
  /** Told of devices with something new to deliver (the webhook dispatcher's wake). */
  onWork: (deviceId: string, webhookId: string, rewound: boolean) => void = () => undefined;
  /** By read model (the name the projector's ChangedMessage uses): how to drop a cached view of one key. */
  private readonly forgetters = new Map<string, Array<(key: string) => void>>();
  private started: Promise<void> | undefined;
  private unlisten: (() => void) | undefined;
  private firstAnswer: { resolve: () => void; reject: (error: Error) => void; timer: ClockTimer } | undefined;

  constructor(
    private readonly channel: ProjectorChannel,
    log: Logger,
    waitTimeoutMs = DEFAULT_WAIT_TIMEOUT_MS,
    private readonly clock: Clock = systemClock,
    private readonly startTimeoutMs = PROJECTOR_START_TIMEOUT_MS,
  ) {
    this.main = new FollowedProjections(this, log, waitTimeoutMs, clock);
    this.webhooks = new FollowedProjections(this, log.child({ component: 'webhooks' }), waitTimeoutMs, clock);
  }

  /** `forget` drops the cached view of a key when the projector says `model` changed it. */
  onChanged(model: string, forget: (key: string) => void): void {
    const forgetters = this.forgetters.get(model);
    if (forgetters) forgetters.push(forget);
    else this.forgetters.set(model, [forget]);
  }

  /** Hands the worker's key uses to the projector, which records them (src/devices/key-usage.ts). */
  sendKeyUses(uses: Array<[keyHash: string, at: number]>): void {
    if (uses.length > 0) this.channel.send({ dmg: 'key-use', uses });
  }

  /**
   * Listens, says hello, and resolves at the projector's first answer; rejects when none comes within the start
   * timeout (a primary that never answers), or when stopped first. Idempotent.
   */
  start(): Promise<void> {
    this.started ??= new Promise<void>((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.firstAnswer = undefined;
        this.stop();
        reject(new Error(`the machine projector did not answer within ${this.startTimeoutMs} ms`));
      }, this.startTimeoutMs);
      this.firstAnswer = { resolve, reject, timer };
      this.unlisten = this.channel.onMessage((message) => {
        if (isChangedMessage(message)) this.forget(message);
        else if (isProjectedMessage(message)) this.receive(message);
      });
      this.channel.send({ dmg: 'projector-hello' });
    });
    return this.started;
  }

  stop(): void {
    this.unlisten?.();
    this.unlisten = undefined;
    const first = this.firstAnswer;
    this.firstAnswer = undefined;
    if (!first) return;
    this.clock.clear(first.timer);
    first.reject(new Error('stopped before the machine projector answered'));
  }

  /** Drops the cached views the batch changed (before its `projected` message releases any request). */
  forget(message: ChangedMessage): void {
    for (const [model, key] of message.keys) for (const forget of this.forgetters.get(model) ?? []) forget(key);
  }

  receive(message: ProjectedMessage): void {
    this.main.advance(message.main, message.failing);
    this.webhooks.advance(message.webhooks, message.failing);
    for (const [deviceId, webhookId, rewound] of message.work) this.onWork(deviceId, webhookId, rewound);
    const first = this.firstAnswer;
    this.firstAnswer = undefined;
    if (!first) return;
    this.clock.clear(first.timer);
    first.resolve();
  }
}
