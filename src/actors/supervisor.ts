/**
 * The device actors of this process: started on demand, stopped when their device is deleted, and the
 * sessions that were running loaded (so resumed) at process start. Nothing here is the only copy of anything:
 * an actor's state is its session stream. With several processes a device's lease decides who runs it
 * (src/cluster/device-leases.ts): `adopt` and `release` follow the leases, and `storeFor` carries the fence.
 */
import type { Logger } from 'pino';
import { DEVICE_EVENT_TYPES, type DeviceEvent, deviceStream } from '../devices/device-events.js';
import { DomainError, deviceNotFound, invalidField } from '../errors/domain-error.js';
import { domainErrorOfEngine } from '../engines/engine-failure.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { type Engine, type EngineConnection, EngineError, type LinkedAccount } from '../engines/engine.js';
import type { Engines } from '../engines/engines.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { SessionStateName } from '../sessions/session-events.js';
import { DeviceActor, type DeviceActorOptions, type GroupReportListener } from './device-actor.js';
import type { CommandResult, SessionTransition } from '../sessions/session-commands.js';
import { type DeviceMachine, createDeviceMachine } from '../sessions/device-machine.js';
import { type ContactsListener, type MessageSink, type ReceiptRecorder, StoreMessageSink } from './message-sink.js';
import type { ReconnectSettings } from '../sessions/reconnect-policy.js';
import { Backoff } from './backoff.js';
import { type SpoolSettings, isTransientStoreFailure } from './event-spool.js';
import { RUNNING_STATES, loadSession } from '../sessions/session-record.js';
import { type Clock, systemClock } from '../time/clock.js';
import { untilShown } from './until-shown.js';

/** The devices read model as far as the supervisor needs it (DevicesReadModel fits). */
export interface DeviceDirectory {
  list(options: { limit: number; after?: string; state?: string }): {
    items: Array<{ id: string }>;
    nextAfter: string | null;
  };
}

/**
 * Where the actors' reports go: a sink, or the default sink (StoreMessageSink), which needs the writer its
 * receipts go to (the outbox's, src/outbox/commands/outbox-receipts.ts).
 */
export type SupervisorOptions = SupervisorSettings &
  ({ sink: MessageSink; receipts?: undefined } | { sink?: undefined; receipts: ReceiptRecorder });

export interface SupervisorSettings {
  store: EventStore;
  engines: Engines;
  devices: DeviceDirectory;
  reconnect: ReconnectSettings;
  log: Logger;
  /** Extension point for the contacts read model (used by the default sink). */
  onContacts?: ContactsListener;
  /** Source of jitter (tests fix it). */
  random?: () => number;
  /** Sessions resumed at once during restore. */
  restoreConcurrency?: number;
  /** Passed to each actor (see DeviceActorOptions). */
  snapshotEvery?: number;
  /** Passed to each actor: its retry spool of engine reports (see DeviceActorOptions). */
  spool?: Partial<SpoolSettings>;
  /**
   * Several processes: the store a device's actor writes through (its lease as a fence), and whether this
   * process runs the device. Sessions are then resumed by `adopt`, not by `restore`.
   */
  cluster?: {
    storeFor: (deviceId: string) => EventStore;
    owns: (deviceId: string) => boolean;
    /** A session command for a device another process runs: asked of its owner through the store. */
    forward: (
      deviceId: string,
      command:
        | { type: 'open' }
        | { type: 'close'; logout: boolean }
        | { type: 'reboot' }
        | { type: 'qr' }
        | { type: 'pair'; phone: string },
    ) => Promise<
      CommandResult & {
        qr?: { code: string; expiresAt: string };
        pairing?: { code: string; expiresAt: string };
        moving?: boolean;
      }
    >;
  };
  /** Where the owner's wait for a code to show (`qr`) passes (tests move it). Default: the system clock. */
  clock?: Clock;
  /** Passed to each actor: where group reports go (see DeviceActorOptions). */
  groupReports?: GroupReportListener;
  channelReports?: DeviceActorOptions['channelReports'];
}

/** Told of every recorded transition: the device, its new state, and the whole change (reason, phone, …). */
export type SessionListener = (deviceId: string, state: SessionStateName, transition: SessionTransition) => void;

/**
 * The QR code on show, or why none is: the state where the device runs (none: no actor there), and `moving` when it
 * is between processes (taken over and not loaded yet, or handed on).
 */
export interface QrOnShow {
  qr?: { code: string; expiresAt: string };
  state?: SessionStateName;
  moving?: boolean;
}

/** A session command for a device that does not exist (or no longer). */
export class UnknownDeviceError extends DomainError {
  constructor(deviceId: string) {
    super('not_found', deviceNotFound(deviceId).message);
  }
}

const RESTORE_PAGE = 500;
/** A deleted device's credentials: wiped in this many tries at most while the store fails transiently (0.2 s, 0.4 s, … apart). */
const FORGET_TRIES = 5;
const FORGET_RETRY_DELAY_MS = 200;
const isDeviceEvent = eventGuard<DeviceEvent>(DEVICE_EVENT_TYPES);

export class Supervisor {
  private readonly actors = new Map<string, DeviceActor>();
  private readonly listeners = new Set<SessionListener>();
  private readonly machine: DeviceMachine;
  private readonly sink: MessageSink;
  private restoring: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(private readonly options: SupervisorOptions) {
    this.machine = createDeviceMachine(options.reconnect, options.random);
    this.sink =
      options.sink === undefined
        ? new StoreMessageSink(options.store, options.receipts, options.onContacts)
        : options.sink;
  }

  open(deviceId: string): Promise<CommandResult> {
    if (this.elsewhere(deviceId)) return this.options.cluster!.forward(deviceId, { type: 'open' });
    return this.actor(deviceId).open();
  }

  close(deviceId: string, options: { logout?: boolean } = {}): Promise<CommandResult> {
    if (this.elsewhere(deviceId))
      return this.options.cluster!.forward(deviceId, { type: 'close', logout: options.logout === true });
    return this.actor(deviceId).close(options);
  }

  reboot(deviceId: string): Promise<CommandResult> {
    if (this.elsewhere(deviceId)) return this.options.cluster!.forward(deviceId, { type: 'reboot' });
    return this.actor(deviceId).reboot();
  }

  /**
   * The QR code on show, asked of the process that runs the device (several processes) or of its actor here. With
   * several processes the owner waits a moment for a device on its way to a code (./until-shown.ts): devices move as
   * processes join, and the code is on show a moment later. A lone process answers at once.
   */
  async qr(deviceId: string): Promise<QrOnShow> {
    if (this.elsewhere(deviceId)) {
      const { qr, state, moving } = await this.options.cluster!.forward(deviceId, { type: 'qr' });
      return { ...(qr ? { qr } : {}), state, ...(moving ? { moving } : {}) };
    }
    const onShow = () => this.actors.get(deviceId)?.qr();
    if (this.options.cluster === undefined) {
      const qr = onShow();
      const state = this.state(deviceId);
      return { ...(qr ? { qr } : {}), ...(state ? { state } : {}) };
    }
    const { outcome: qr, ...where } = await untilShown(
      this,
      this.options.clock ?? systemClock,
      deviceId,
      'qr',
      onShow,
      (code) => code !== undefined,
    );
    return { ...(qr ? { qr } : {}), ...where };
  }

  /** Several processes, and this one does not run the device. */
  private elsewhere(deviceId: string): boolean {
    return this.options.cluster !== undefined && !this.options.cluster.owns(deviceId);
  }

  /** Links an account by pairing code (see DeviceActor.pair); several processes: asked of the process that runs the device. */
  /** A pairing code for `phone`; the engine's refusals in the API's words (engine-failure.ts). */
  async pair(deviceId: string, phone: string): ReturnType<DeviceActor['pair']> {
    if (!this.elsewhere(deviceId)) {
      try {
        return await this.actor(deviceId).pair(phone);
      } catch (error) {
        if (error instanceof EngineError && error.code === 'unknown_number')
          throw invalidField('/phone', error.message);
        throw domainErrorOfEngine(error, this.state(deviceId), { pairing_unavailable: 'pairing_unavailable' });
      }
    }
    const { pairing, ...result } = await this.options.cluster!.forward(deviceId, { type: 'pair', phone });
    if (!pairing)
      throw new DomainError(
        'pairing_unavailable',
        `the session is ${result.state}: no pairing code was issued; try again`,
      );
    return { ...result, pairing };
  }

  /** The running actor of a device, if this process has one (no load). */
  peek(deviceId: string): DeviceActor | undefined {
    return this.actors.get(deviceId);
  }

  /** Waits until the device's actor has handled what is already queued for it (see DeviceActor.settled). */
  settled(deviceId: string): Promise<{ state: SessionStateName | undefined; position: number }> | undefined {
    return this.actors.get(deviceId)?.settled();
  }

  /** The live connection of an online device, for sending (the outbox). */
  connection(deviceId: string): EngineConnection | undefined {
    return this.actors.get(deviceId)?.liveConnection();
  }

  account(deviceId: string): LinkedAccount | undefined {
    return this.actors.get(deviceId)?.account();
  }

  /** The state as this process knows it (undefined when the device has no actor here). */
  state(deviceId: string): SessionStateName | undefined {
    return this.actors.get(deviceId)?.state();
  }

  /**
   * Several processes, and this process has no loaded actor for the device: `arriving` while it holds the device's
   * lease (taking it over: the actor loads next), `left` once it does not (handed on). Undefined otherwise: a lone
   * process without an actor for a device does not run it.
   */
  handover(deviceId: string): 'arriving' | 'left' | undefined {
    if (this.options.cluster === undefined || this.state(deviceId) !== undefined) return undefined;
    return this.options.cluster.owns(deviceId) ? 'arriving' : 'left';
  }

  /** Called after every recorded transition of every device, once its side effects ran. Returns an unsubscribe. */
  onStateChange(listener: SessionListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The device was deleted: close and unlink its session, wipe its credentials, drop its actor. */
  async remove(deviceId: string): Promise<void> {
    // Several processes: the device's owner closes its session when it sees the deletion in the log.
    if (this.options.cluster && !this.options.cluster.owns(deviceId)) return;
    // A session that never ran left no connection and no credentials anywhere: nothing to undo.
    if (!this.actors.has(deviceId) && (await loadSession(this.options.store, deviceId)).revision < 0) return;
    const actor = this.actor(deviceId);
    try {
      await actor.close({ logout: true, reason: 'device_deleted' });
    } catch (error) {
      // The deletion is recorded already; a session that cannot be reached (e.g. its engine is not
      // available here) has no connection of this process to end.
      this.options.log.warn({ deviceId, err: error }, 'could not close the session of a deleted device');
    } finally {
      this.actors.delete(deviceId);
      await actor.stop();
    }
    // Whatever the close did (refused by the store before its logout ran, or its wipe failed): once the
    // connection has ended, nothing can write the credentials back, and a deleted device keeps none.
    await this.forgetCredentials(deviceId);
  }

  private async forgetCredentials(deviceId: string): Promise<void> {
    const backoff = new Backoff({
      baseDelayMs: FORGET_RETRY_DELAY_MS,
      maxDelayMs: FORGET_RETRY_DELAY_MS * 2 ** FORGET_TRIES,
    });
    for (let tries = 1; ; tries++) {
      try {
        await (await this.engineOf(deviceId)).forget(deviceId);
        return;
      } catch (error) {
        if (!isTransientStoreFailure(error) || tries >= FORGET_TRIES) {
          this.options.log.error({ deviceId, err: error }, 'could not wipe the credentials of a deleted device');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, backoff.next()));
      }
    }
  }

  /**
   * Loads every device whose session was running (connecting, qr, online, reconnecting) when the last
   * process stopped; loading resumes it. Runs in the background; stopAll() waits for it.
   */
  restore(): Promise<void> {
    if (this.options.cluster) return Promise.resolve();
    this.restoring = this.restoreRunning().catch((error: unknown) =>
      this.options.log.error({ err: error }, 'restoring sessions failed'),
    );
    return this.restoring;
  }

  /** This process now holds the device's lease: load its actor, which resumes a running session. */
  async adopt(deviceId: string): Promise<void> {
    if (this.stopping) return;
    await this.actor(deviceId).load();
  }

  /** The device's lease is gone or being handed over: end its connection here, keep what is recorded. */
  async release(deviceId: string): Promise<void> {
    const actor = this.actors.get(deviceId);
    if (!actor) return;
    this.actors.delete(deviceId);
    await actor.stop();
  }

  /** Process shutdown: every connection ends, credentials and recorded states stay as they are. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    await this.restoring;
    const actors = [...this.actors.values()];
    this.actors.clear();
    await Promise.all(actors.map((actor) => actor.stop().catch(() => undefined)));
    await this.options.engines.close();
  }

  private actor(deviceId: string): DeviceActor {
    let actor = this.actors.get(deviceId);
    if (!actor) {
      actor = new DeviceActor({
        deviceId,
        resolveEngine: () => this.engineOf(deviceId),
        store: this.options.cluster ? this.options.cluster.storeFor(deviceId) : this.options.store,
        machine: this.machine,
        sink: this.sink,
        log: this.options.log,
        onTransition: (transition) => this.notify(transition),
        snapshotEvery: this.options.snapshotEvery,
        ...(this.options.spool ? { spool: this.options.spool } : {}),
        ...(this.options.groupReports ? { groupReports: this.options.groupReports } : {}),
        ...(this.options.channelReports ? { channelReports: this.options.channelReports } : {}),
      });
      this.actors.set(deviceId, actor);
    }
    return actor;
  }

  /** The engine is fixed at creation and recorded in the device's own stream, which outlives the device. */
  private async engineOf(deviceId: string): Promise<Engine> {
    const [first] = await this.options.store.readStream(deviceStream(deviceId), { maxCount: 1 });
    const created = first && isDeviceEvent(first) ? first : undefined;
    if (created?.type !== 'DeviceCreated') {
      this.actors.delete(deviceId);
      throw new UnknownDeviceError(deviceId);
    }
    return this.options.engines.get(created.data.engine);
  }

  private notify(transition: SessionTransition): void {
    for (const listener of this.listeners) {
      try {
        listener(transition.deviceId, transition.state, transition);
      } catch (error) {
        this.options.log.error({ err: error, deviceId: transition.deviceId }, 'a session listener failed');
      }
    }
  }

  private async restoreRunning(): Promise<void> {
    const ids: string[] = [];
    for (const state of RUNNING_STATES) {
      let after: string | undefined;
      do {
        const page = this.options.devices.list({
          limit: RESTORE_PAGE,
          state,
          ...(after === undefined ? {} : { after }),
        });
        ids.push(...page.items.map((item) => item.id));
        after = page.nextAfter ?? undefined;
      } while (after !== undefined);
    }
    if (ids.length > 0) this.options.log.info({ sessions: ids.length }, 'resuming sessions that were running');
    let next = 0;
    const worker = async () => {
      while (!this.stopping && next < ids.length) {
        const deviceId = ids[next++];
        try {
          await this.actor(deviceId).load();
        } catch (error) {
          this.options.log.error({ deviceId, err: error }, 'could not resume a session');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(ids.length, this.options.restoreConcurrency ?? 16) }, worker));
  }
}
