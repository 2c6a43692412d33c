/**
 * One device's actor: it owns the device's session stream (through its writer, session-commands.ts) and its
 * engine connection. Commands and engine callbacks go through one mailbox, one at a time: decided, appended,
 * and only then carried out (invariants 2 and 3). Late callbacks of a connection it has moved on from are
 * ignored, but inbound messages and receipts are facts and always reach the sink, through the retry spools
 * (event-spool.ts). Pairing by code: device-pairing.ts. docs/architecture.md, "When the store cannot write".
 */
import type { Logger } from 'pino';
import type { Engine, EngineConnection, EngineEvents, GroupReport, LinkedAccount } from '../engines/engine.js';
import type { ChannelReport } from '../channels/channel-events.js';
import { EngineError } from '../engines/engine.js';
import { DomainError } from '../errors/domain-error.js';
import { type EventStore, WrongExpectedRevisionError } from '../eventstore/event-store.js';
import type { SessionStateChangedData, SessionStateName } from '../sessions/session-events.js';
import type { DeviceMachine, DeviceMachineEvent } from '../sessions/device-machine.js';
import { createSessionDecider } from '../sessions/session-decider.js';
import { type CommandResult, SessionCommands, type SessionTransition } from '../sessions/session-commands.js';
import { type SessionRecord, isRunning } from '../sessions/session-record.js';
import { EventSpool, type SpoolSettings, DEFAULT_SPOOL_SETTINGS, isTransientStoreFailure } from './event-spool.js';
import type { MessageSink } from './message-sink.js';
import { Backoff } from './backoff.js';
import { DevicePairing, PAIRING_READY_TIMEOUT_MS, type PairingCode } from './device-pairing.js';

export interface DeviceActorOptions {
  deviceId: string;
  /** Resolved on first load (the device's engine is in its registry stream). */
  resolveEngine: () => Promise<Engine>;
  store: EventStore;
  machine: DeviceMachine;
  sink: MessageSink;
  log: Logger;
  onTransition: (transition: SessionTransition) => void;
  /** A snapshot is saved after this many new events. */
  snapshotEvery?: number;
  /** Longest wait for an engine's close/logout/connect promise before the actor moves on. */
  effectTimeoutMs?: number;
  /**
   * The retry spool of the engine's reports (tests shorten its delays); its delays are also those of a
   * lifecycle report or a resume the store could not record yet.
   */
  spool?: Partial<SpoolSettings>;
  /** Where the engine's group and channel reports go (those streams' writers); without them they are dropped. */
  groupReports?: GroupReportListener;
  channelReports?: (deviceId: string, report: ChannelReport) => Promise<void>;
}

/** Records a group change the network reported; resolves once it is durable. */
export type GroupReportListener = (deviceId: string, report: GroupReport) => Promise<void>;

export class ActorStoppedError extends DomainError {
  constructor(deviceId: string) {
    super(
      'shutting_down',
      `the actor of device ${deviceId} is stopped: the gateway is stopping or the device was just deleted; try again`,
    );
  }
}

const DEFAULT_EFFECT_TIMEOUT_MS = 10_000;

export class DeviceActor {
  readonly deviceId: string;
  /** The session stream's writer: the session's state, decided and recorded. */
  private readonly session: SessionCommands;
  private engine: Engine | undefined;
  /** Number of the current connection; callbacks of other numbers are stale. */
  private epoch = 0;
  private connection: EngineConnection | undefined;
  private pendingConnection: Promise<EngineConnection | undefined> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private mailbox: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** The engine's reports, written in order and retried until the store takes them. */
  /** History has a spool of its own: a large import does not hold up live messages. */
  private readonly spools: Record<'inbound' | 'receipts' | 'contacts' | 'groups' | 'history', EventSpool>;
  /** True while a spool is blocked: no connection is started (the network keeps what it has for us). */
  private intakeHeld = false;
  /** A transition taken while the store could not record it (the intake hold); recorded before anything else. */
  private unrecorded: SessionStateChangedData | undefined;
  /**
   * Engine callbacks (and retry timer ticks) not decided yet, oldest first. Empty but for a moment, unless the
   * store could not record the first one's decision: it then waits with those after it, in order.
   */
  private readonly signals: Array<{ epoch: number; event: DeviceMachineEvent }> = [];
  private signalRetryTimer: NodeJS.Timeout | undefined;
  private readonly signalBackoff: Backoff;
  /** A running session whose resume the store did not take: loaded (and resumed) again when it fires. */
  private resumeTimer: NodeJS.Timeout | undefined;
  private readonly resumeBackoff: Backoff;
  /** Resuming the intake after a hold, while the store still refuses the change that records it. */
  private readonly releaseBackoff: Backoff;
  private readonly pairing: DevicePairing;

  constructor(private readonly options: DeviceActorOptions) {
    this.deviceId = options.deviceId;
    const log = options.log;
    this.session = new SessionCommands({
      deviceId: options.deviceId,
      store: options.store,
      decider: createSessionDecider(options.machine),
      log,
      ...(options.snapshotEvery === undefined ? {} : { snapshotEvery: options.snapshotEvery }),
    });
    this.pairing = new DevicePairing({
      deviceId: options.deviceId,
      log,
      inspect: () =>
        this.enqueue(async () => {
          if (this.stopped) throw new ActorStoppedError(this.deviceId);
          await this.ensureLoaded();
          const linkedPhone = this.session.sessionRecord().phone;
          const pairing = this.pairingCode();
          return {
            state: this.state()!,
            ...(linkedPhone === undefined ? {} : { linkedPhone }),
            ...(pairing ? { pairing } : {}),
            epoch: this.epoch,
          };
        }),
      open: () => this.open(),
      close: (options) => this.close(options),
      settled: () => this.settled(),
      pairingCode: () => this.pairingCode(),
      connection: () => ({ epoch: this.epoch, connection: this.connection }),
    });
    const spoolSettings = { ...DEFAULT_SPOOL_SETTINGS, ...options.spool };
    this.signalBackoff = new Backoff(spoolSettings);
    this.resumeBackoff = new Backoff(spoolSettings);
    this.releaseBackoff = new Backoff(spoolSettings);
    const spool = () =>
      new EventSpool(
        options.deviceId,
        {
          blocked: (error) => {
            log.warn(
              { deviceId: this.deviceId, err: error },
              "the store cannot take the device's reports: holding its intake until it can",
            );
            this.holdIntake();
          },
          drained: () => {
            if (this.spoolsBlocked()) return;
            log.info({ deviceId: this.deviceId }, "the device's held reports are recorded: resuming its intake");
            this.releaseIntake();
          },
          givenUp: (what, error) =>
            log.error(
              { deviceId: this.deviceId, what, err: error },
              'an engine report could not be recorded and was given up',
            ),
        },
        spoolSettings,
      );
    this.spools = { inbound: spool(), receipts: spool(), contacts: spool(), groups: spool(), history: spool() };
  }

  /** Loads the actor; a session whose record says it runs is resumed (this process owns it now). */
  load(): Promise<SessionStateName> {
    return this.enqueue(async () => {
      await this.ensureLoaded();
      return this.state()!;
    });
  }

  open(): Promise<CommandResult> {
    return this.command({ type: 'OPEN' });
  }

  close(options: { logout?: boolean; reason?: string } = {}): Promise<CommandResult> {
    return this.command({
      type: 'CLOSE',
      logout: options.logout === true,
      ...(options.reason ? { reason: options.reason } : {}),
    });
  }

  reboot(): Promise<CommandResult> {
    return this.command({ type: 'REBOOT' });
  }

  /**
   * Resolves once everything already in the mailbox (e.g. an engine callback that just arrived) is done:
   * the state then, and the position of the last transition recorded.
   */
  settled(): Promise<{ state: SessionStateName | undefined; position: number }> {
    return this.enqueue(async () => ({ state: this.state(), position: this.session.position() }));
  }

  /** The state as this actor knows it; undefined before it is loaded. */
  state(): SessionStateName | undefined {
    return this.session.state();
  }

  /** The durable part of the session (what its stream says). */
  sessionRecord(): SessionRecord {
    return this.session.sessionRecord();
  }

  /** The code on show, while the state is `qr`. */
  qr(): { code: string; expiresAt: string } | undefined {
    return this.state() === 'qr' ? this.session.context()!.qr : undefined;
  }

  /** The code to type on the phone, while the state is `pairing`. */
  pairingCode(): PairingCode | undefined {
    return this.state() === 'pairing' ? this.session.context()!.pairing : undefined;
  }

  /** Links the account `phone` by a pairing code (device-pairing.ts). */
  pair(phone: string, readyTimeoutMs = PAIRING_READY_TIMEOUT_MS): Promise<CommandResult & { pairing: PairingCode }> {
    return this.pairing.pair(phone, readyTimeoutMs);
  }

  /** The linked account, while online. */
  account(): LinkedAccount | undefined {
    return this.state() === 'online' ? this.session.context()!.account : undefined;
  }

  /** The live connection, while online (the outbox sends through it). */
  liveConnection(): EngineConnection | undefined {
    return this.state() === 'online' ? this.connection : undefined;
  }

  /**
   * Process shutdown: ends the connection and keeps the credentials, records nothing, so that the next
   * start sees the session as it was and resumes it.
   */
  stop(): Promise<void> {
    return this.enqueue(async () => {
      this.stopped = true;
      this.clearRetryTimer();
      clearTimeout(this.signalRetryTimer);
      clearTimeout(this.resumeTimer);
      await this.endConnection('close');
      const lost = Object.values(this.spools).flatMap((spool) => spool.close());
      // In memory only: a process that stops while the store refuses writes cannot keep these.
      if (lost.length > 0)
        this.options.log.error(
          { deviceId: this.deviceId, lost },
          'engine reports the store never took are lost with this process',
        );
    });
  }

  /** Reports held in the spool, not yet durable (0 when the store takes everything). */
  heldReports(): number {
    return Object.values(this.spools).reduce((held, spool) => held + spool.size, 0);
  }

  private spoolsBlocked(): boolean {
    return Object.values(this.spools).some((spool) => spool.blocked);
  }

  private command(event: DeviceMachineEvent): Promise<CommandResult> {
    return this.enqueue(async () => {
      if (this.stopped) throw new ActorStoppedError(this.deviceId);
      await this.ensureLoaded();
      return this.dispatch(event);
    });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const result = this.mailbox.then(task);
    this.mailbox = result.catch(() => undefined);
    return result;
  }

  private async ensureLoaded(): Promise<void> {
    if (this.session.loaded) return;
    try {
      this.engine ??= await this.options.resolveEngine();
      // The record says running but no connection exists in this process: the process that ran it is gone.
      if (isRunning(await this.session.load())) await this.dispatch({ type: 'RESUME' });
      this.resumeBackoff.reset();
    } catch (error) {
      // Not loaded until resumed: the next command loads it again, and so does a retry while the store
      // refuses writes (a session recorded running must not stay without a connection).
      this.session.unload();
      if (isTransientStoreFailure(error)) this.loadLater();
      throw error;
    }
  }

  private loadLater(): void {
    if (this.stopped || this.resumeTimer) return;
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = undefined;
      this.enqueue(async () => {
        if (!this.stopped) await this.ensureLoaded();
      }).catch((error: unknown) =>
        this.options.log.warn({ deviceId: this.deviceId, err: error }, 'could not load the session yet; trying again'),
      );
    }, this.resumeBackoff.next());
    this.resumeTimer.unref();
  }

  /** Decide, record, then act. */
  private async dispatch(event: DeviceMachineEvent, conflictRetry = true): Promise<CommandResult> {
    await this.recordHeldChange();
    let decided;
    try {
      decided = await this.session.handle(event);
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || !conflictRetry) throw error;
      // Someone else wrote this session: decide again on what the stream says now, and hold no
      // connection the stream does not call for.
      this.options.log.warn(
        { deviceId: this.deviceId, err: error },
        'session stream changed under the actor; reloading',
      );
      if (!isRunning(await this.session.load())) {
        this.clearRetryTimer();
        await this.endConnection('close');
      }
      return this.dispatch(event, false);
    }
    const { state, recorded, instructions } = decided;
    for (const action of instructions)
      await this.perform(action.type, action.params as Record<string, unknown> | undefined);
    if (recorded) {
      // Observers of `online` expect the connection to be usable: wait for connect() to hand it over.
      if (recorded.state === 'online' && !this.connection) await this.settle(this.pendingConnection);
      this.notify(recorded);
    }
    return { state, changed: recorded !== undefined, ...(recorded ? { position: recorded.position } : {}) };
  }

  private notify(recorded: SessionTransition): void {
    try {
      this.options.onTransition(recorded);
    } catch (error) {
      this.options.log.error({ deviceId: this.deviceId, err: error }, 'a session observer failed');
    }
  }

  /** Carries out one instruction of the machine; a failing side effect is logged, the decision stands. */
  private async perform(type: string, params: Record<string, unknown> | undefined): Promise<void> {
    try {
      switch (type) {
        case 'connect':
          // Held while the store cannot take reports; STORE.AVAILABLE asks again.
          if (!this.intakeHeld) await this.startConnection();
          return;
        case 'disconnect':
          await this.endConnection('close');
          return;
        case 'logout':
          await this.endConnection('logout');
          await this.engine!.forget(this.deviceId);
          return;
        case 'forget':
          await this.endConnection('close');
          await this.engine!.forget(this.deviceId);
          return;
        case 'scheduleRetry':
          this.scheduleRetry(Number(params?.delayMs ?? 0));
          return;
        case 'cancelRetry':
          this.clearRetryTimer();
          return;
      }
    } catch (error) {
      this.options.log.error({ deviceId: this.deviceId, effect: type, err: error }, 'session side effect failed');
    }
  }

  private async startConnection(): Promise<void> {
    await this.endConnection('close'); // a connect replaces whatever ran before
    const epoch = ++this.epoch;
    const events = this.engineEvents(epoch);
    this.pendingConnection = this.engine!.connect(this.deviceId, events).then(
      (connection) => {
        if (epoch === this.epoch) this.connection = connection;
        return connection;
      },
      (error: unknown) => {
        const permanent = error instanceof EngineError && error.permanent;
        const message = (error as Error)?.message ?? String(error);
        this.signal(
          epoch,
          permanent
            ? { type: 'ENGINE.FAILED', error: { code: error.code, message } }
            : { type: 'ENGINE.DISCONNECTED', kind: 'transient', detail: message },
        );
        return undefined;
      },
    );
  }

  /** Ends the current connection (if any); its late callbacks become stale. */
  private async endConnection(how: 'close' | 'logout'): Promise<void> {
    this.epoch++;
    const pending = this.pendingConnection;
    this.pendingConnection = undefined;
    this.connection = undefined;
    if (!pending) return;
    const connection = await this.settle(pending);
    if (!connection) {
      // connect() has not answered in time: close what it brings whenever it does.
      void pending.then((late) => late?.close()).catch(() => undefined);
      return;
    }
    try {
      await this.settle(how === 'logout' ? connection.logout() : connection.close());
    } catch (error) {
      this.options.log.warn({ deviceId: this.deviceId, how, err: error }, 'engine connection did not end cleanly');
    }
  }

  private engineEvents(epoch: number): EngineEvents {
    const { sink } = this.options;
    return {
      qr: (code, expiresAt) => this.signal(epoch, { type: 'ENGINE.QR', code, expiresAt: expiresAt.toISOString() }),
      pairingCode: (code, expiresAt) =>
        this.signal(epoch, { type: 'ENGINE.PAIRING_CODE', code, expiresAt: expiresAt.toISOString() }),
      online: (account) => this.signal(epoch, { type: 'ENGINE.ONLINE', account }),
      disconnected: (kind, detail) => this.signal(epoch, { type: 'ENGINE.DISCONNECTED', kind, detail }),
      inbound: (message, options) => {
        sink.arriving?.(this.deviceId, message);
        const written = this.spools.inbound.write(
          `inbound ${message.waMessageId}`,
          () => sink.received(this.deviceId, message),
          options,
        );
        // Refused or given up: never recorded (the caller is answered by `written` itself).
        written.catch(() => sink.abandoned?.(this.deviceId, message));
        return written;
      },
      receipt: (receipt) =>
        this.spools.receipts.write(`receipt ${receipt.waMessageId} ${receipt.status}`, () =>
          sink.receipt(this.deviceId, receipt),
        ),
      contacts: (contacts) =>
        this.spools.contacts.write(`contacts (${contacts.length})`, () => sink.contacts(this.deviceId, contacts)),
      // Same spool and stream as contacts: in the order the network told them.
      identities: (pairs) =>
        this.spools.contacts.write(`identities (${pairs.length})`, async () => sink.identities?.(this.deviceId, pairs)),
      // Chat activity shares the inbound spool: it goes to the same stream, in the same order.
      activity: (activity) =>
        this.spools.inbound.write(`activity ${activity.kind}`, async () => sink.activity?.(this.deviceId, activity)),
      history: (chunk, options) =>
        this.spools.history.write(
          `history ${chunk.syncId} (${chunk.messages.length})`,
          async () => sink.history?.(this.deviceId, chunk),
          options,
        ),
      groups: (report) =>
        this.spools.groups.write(`group ${report.kind}`, async () =>
          this.options.groupReports?.(this.deviceId, report),
        ),
      channels: (report) =>
        this.spools.groups.write(`channel ${report.kind}`, async () =>
          this.options.channelReports?.(this.deviceId, report),
        ),
    };
  }

  /**
   * The spool is blocked: end the connection now and connect no more (see the file comment). The store
   * cannot record this transition yet, so it is taken first and recorded as soon as the store takes
   * writes again, before any other (the one exception to "append before acting": the act is what keeps
   * unrecordable reports from coming).
   */
  private holdIntake(): void {
    this.enqueue(async () => {
      if (this.stopped || !this.session.loaded) return;
      this.intakeHeld = true;
      const { change, instructions } = this.session.decideUnrecorded({ type: 'STORE.UNAVAILABLE' });
      if (change) this.unrecorded = change;
      for (const action of instructions)
        await this.perform(action.type, action.params as Record<string, unknown> | undefined);
      await this.recordHeldChange().catch(() => undefined);
    }).catch((error: unknown) =>
      this.options.log.error({ deviceId: this.deviceId, err: error }, 'could not hold the intake'),
    );
  }

  /**
   * The spool has drained: record what the hold left unrecorded, then connect again. Tried again with backoff
   * for as long as the store refuses that record: given up, the session would stay held, never connecting again.
   */
  private releaseIntake(): void {
    this.enqueue(async () => {
      if (this.stopped || !this.session.loaded || this.spoolsBlocked()) return;
      this.intakeHeld = false;
      await this.dispatch({ type: 'STORE.AVAILABLE' });
    }).then(
      () => this.releaseBackoff.reset(),
      (error: unknown) => {
        if (this.releaseBackoff.fresh)
          this.options.log.error(
            { deviceId: this.deviceId, err: error },
            'could not resume the intake; trying again until the store takes it',
          );
        if (!this.stopped) setTimeout(() => this.releaseIntake(), this.releaseBackoff.next()).unref();
      },
    );
  }

  /** Appends the transition the intake hold could not record; a no-op when there is none. */
  private async recordHeldChange(): Promise<void> {
    const change = this.unrecorded;
    if (!change) return;
    try {
      const recorded = await this.session.append(change);
      this.unrecorded = undefined;
      this.notify(recorded);
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      // Another writer: the decision that follows meets the same conflict and reloads.
      this.unrecorded = undefined;
    }
  }

  /** An engine callback (or the retry timer) of connection `epoch`, decided in turn unless it is stale. */
  private signal(epoch: number, event: DeviceMachineEvent): void {
    this.enqueue(async () => {
      this.signals.push({ epoch, event });
      await this.decideSignals();
    }).catch((error: unknown) =>
      this.options.log.error(
        { deviceId: this.deviceId, event: event.type, err: error },
        'could not decide a session change',
      ),
    );
  }

  /**
   * Decides the waiting callbacks in the order they came. One whose decision the store cannot record stays
   * first and is tried again with backoff for as long as that takes (a new callback tries it at once too):
   * dropping it would leave the session `online`, or `reconnecting` with no retry, on a dead connection.
   */
  private async decideSignals(): Promise<void> {
    while (this.signals.length > 0) {
      const { epoch, event } = this.signals[0];
      if (epoch === this.epoch && !this.stopped && this.session.loaded) {
        try {
          await this.dispatch(event);
        } catch (error) {
          if (isTransientStoreFailure(error)) {
            if (this.signalBackoff.fresh)
              this.options.log.error(
                { deviceId: this.deviceId, event: event.type, err: error },
                'the store cannot record a session change: trying again until it can',
              );
            this.decideSignalsLater();
            return;
          }
          this.options.log.error(
            { deviceId: this.deviceId, event: event.type, err: error },
            'could not record a session change',
          );
        }
      }
      this.signals.shift();
    }
    this.signalBackoff.reset();
  }

  private decideSignalsLater(): void {
    if (this.signalRetryTimer) return;
    this.signalRetryTimer = setTimeout(() => {
      this.signalRetryTimer = undefined;
      this.enqueue(() => this.decideSignals()).catch((error: unknown) =>
        this.options.log.error({ deviceId: this.deviceId, err: error }, 'could not decide a session change'),
      );
    }, this.signalBackoff.next());
    this.signalRetryTimer.unref();
  }

  private scheduleRetry(delayMs: number): void {
    this.clearRetryTimer();
    const epoch = this.epoch;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.signal(epoch, { type: 'RETRY' });
    }, delayMs);
    this.retryTimer.unref();
  }

  private clearRetryTimer(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** The promise's value, or undefined when it takes longer than the effect timeout. */
  private async settle<T>(promise: Promise<T> | undefined): Promise<T | undefined> {
    if (!promise) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.options.effectTimeoutMs ?? DEFAULT_EFFECT_TIMEOUT_MS);
      timer.unref();
    });
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
