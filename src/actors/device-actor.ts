/**
 * One device's actor: it owns the device's session stream and its engine connection.
 *
 * Everything it does goes through one mailbox, one task at a time: a command or an engine callback is
 * turned into a decision by the device machine (pure), the decision is appended to `session-<deviceId>`
 * with the revision the actor last saw (docs/architecture.md, invariants 2 and 3), and only then are its instructions carried
 * out (connect, disconnect, logout, forget, timers). Its state is rebuilt from a snapshot plus the events
 * after it, never by replaying the machine (docs/architecture.md, invariant 6), so loading it has no side effect.
 *
 * Engine callbacks carry the number of the connection they belong to; once the actor has moved on to
 * another connection, late callbacks of the old one are ignored. Inbound messages and receipts are facts
 * whatever connection brought them, so they always reach the sink, through the device's retry spools
 * (event-spool.ts; one per stream they go to, since their order matters only within a stream): a report
 * the store cannot take is kept and retried, and meanwhile the actor holds its intake (it closes the
 * connection and connects no more) until every spool has drained.
 */
import type { Logger } from 'pino';
import { type SnapshotFrom, transition } from 'xstate';
import type { Engine, EngineConnection, EngineEvents, GroupReport, LinkedAccount } from '../engines/engine.js';
import { EngineError } from '../engines/engine.js';
import { DomainError } from '../errors/domain-error.js';
import { type EventStore, WrongExpectedRevisionError } from '../eventstore/event-store.js';
import {
  type SessionEvent,
  type SessionStateChangedData,
  type SessionStateName,
  sessionStream,
} from '../sessions/session-events.js';
import { type DeviceMachine, type DeviceMachineEvent, stateOf } from '../sessions/device-machine.js';
import { EventSpool, type SpoolSettings, DEFAULT_SPOOL_SETTINGS, isTransientStoreFailure } from './event-spool.js';
import type { MessageSink } from './message-sink.js';
import { Backoff } from './backoff.js';
import {
  INITIAL_SESSION_RECORD,
  type SessionRecord,
  applySessionChange,
  isRunning,
  loadSession,
} from '../sessions/session-record.js';

type MachineSnapshot = SnapshotFrom<DeviceMachine>;

/** A recorded transition, as observers see it. */
export interface SessionTransition extends SessionStateChangedData {
  /** Global position of the appended event (wait for projections to reach it to read your write). */
  position: number;
  revision: number;
}

export interface CommandResult {
  state: SessionStateName;
  /** False when the command changed nothing (e.g. open while already running). */
  changed: boolean;
  /** Position of the event the command appended, if it appended one. */
  position?: number;
}

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
  /** Where the engine's group reports go (the groups stream's writer); without it they are dropped. */
  groupReports?: GroupReportListener;
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

const DEFAULT_SNAPSHOT_EVERY = 25;
/** How long POST /session/pair waits for a connection that shows codes. */
const PAIRING_READY_TIMEOUT_MS = 20_000;
const DEFAULT_EFFECT_TIMEOUT_MS = 10_000;

export class DeviceActor {
  readonly deviceId: string;
  private readonly stream: string;
  private engine: Engine | undefined;
  private snapshot: MachineSnapshot | undefined;
  private record: SessionRecord = INITIAL_SESSION_RECORD;
  private revision = -1;
  private snapshotRevision = -1;
  /** Global position of the last transition this actor recorded (0: none yet). */
  private lastPosition = 0;
  /** Number of the current connection; callbacks of other numbers are stale. */
  private epoch = 0;
  private connection: EngineConnection | undefined;
  private pendingConnection: Promise<EngineConnection | undefined> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private mailbox: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** The engine's reports, written in order and retried until the store takes them. */
  private readonly spools: { inbound: EventSpool; receipts: EventSpool; contacts: EventSpool; groups: EventSpool };
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
  /** The number a pairing code was asked for, on connection `epoch` (asking again for it answers the code on show). */
  private pairingFor: { epoch: number; phone: string } | undefined;
  /** pair() calls, one at a time: a second one finds the code the first one got. */
  private pairings: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DeviceActorOptions) {
    this.deviceId = options.deviceId;
    this.stream = sessionStream(options.deviceId);
    const log = options.log;
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
    this.spools = { inbound: spool(), receipts: spool(), contacts: spool(), groups: spool() };
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
    return this.enqueue(async () => ({ state: this.state(), position: this.lastPosition }));
  }

  /** The state as this actor knows it; undefined before it is loaded. */
  state(): SessionStateName | undefined {
    return this.snapshot && stateOf(this.snapshot);
  }

  /** The durable part of the session (what its stream says). */
  sessionRecord(): SessionRecord {
    return this.record;
  }

  /** The code on show, while the state is `qr`. */
  qr(): { code: string; expiresAt: string } | undefined {
    return this.state() === 'qr' ? this.snapshot!.context.qr : undefined;
  }

  /** The code to type on the phone, while the state is `pairing`. */
  pairingCode(): { code: string; expiresAt: string } | undefined {
    return this.state() === 'pairing' ? this.snapshot!.context.pairing : undefined;
  }

  /**
   * Links the account `phone` by a pairing code: opens the session if it is not running, waits until the
   * connection shows codes (`qr`), and asks the engine for a code, which moves the session to `pairing`.
   * While pairing, asking again for the same number answers the code on show. A request that is refused
   * changes nothing: what can be checked is checked before opening, and a session it opened is closed again.
   * Not in the mailbox itself: it waits for engine callbacks that go through it.
   */
  pair(
    phone: string,
    readyTimeoutMs = PAIRING_READY_TIMEOUT_MS,
  ): Promise<CommandResult & { pairing: { code: string; expiresAt: string } }> {
    const result = this.pairings.then(() => this.pairOnce(phone, readyTimeoutMs));
    this.pairings = result.catch(() => undefined);
    return result;
  }

  private async pairOnce(
    phone: string,
    readyTimeoutMs: number,
  ): Promise<CommandResult & { pairing: { code: string; expiresAt: string } }> {
    const before = await this.enqueue(async () => {
      if (this.stopped) throw new ActorStoppedError(this.deviceId);
      await this.ensureLoaded();
      const requested = this.pairingFor?.epoch === this.epoch ? this.pairingFor.phone : undefined;
      return { state: this.state()!, linkedPhone: this.record.phone, pairing: this.pairingCode(), requested };
    });
    if (before.pairing && before.requested !== undefined) {
      if (before.requested === phone) return { state: 'pairing', changed: false, pairing: before.pairing };
      throw new DomainError(
        'pairing_unavailable',
        `the session is pairing with another number (${before.requested}): close it first to link ${phone}`,
        { reason: 'pairing_another_number' },
      );
    }
    // Opening a stopped session with a linked account would connect that account.
    if (before.state === 'online' || (!isRunning(before.state) && before.linkedPhone !== undefined))
      throw linkedAccountError(before.state);
    const opened = await this.open();
    try {
      return await this.requestPairing(phone, readyTimeoutMs, opened);
    } catch (error) {
      // Opened for this request only: leave the session stopped as it was (logged_out stays logged_out).
      if (opened.changed) await this.undoOpen(before.state);
      throw error;
    }
  }

  private async requestPairing(
    phone: string,
    readyTimeoutMs: number,
    opened: CommandResult,
  ): Promise<CommandResult & { pairing: { code: string; expiresAt: string } }> {
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      const { state } = await this.settled();
      if (state === 'qr' || state === 'pairing') break;
      if (state === 'online' || (state !== 'connecting' && state !== 'reconnecting')) throw linkedAccountError(state);
      if (Date.now() > deadline)
        throw new DomainError(
          'pairing_unavailable',
          `the session is still ${state}: the connection did not get ready for pairing; try again`,
        );
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const connection = this.connection;
    if (!connection?.requestPairingCode)
      throw new DomainError('pairing_unavailable', 'this engine cannot link by pairing code; scan the QR code');
    this.pairingFor = { epoch: this.epoch, phone };
    await connection.requestPairingCode(phone);
    const { state, position } = await this.settled();
    const pairing = this.pairingCode();
    if (!pairing)
      throw new DomainError('pairing_unavailable', `the session is ${state}: no pairing code was issued; try again`);
    return { state: 'pairing', changed: true, position: position || opened.position || 0, pairing };
  }

  /** Closes again a session pair() opened, unless it has stopped by itself meanwhile (its record then says why). */
  private async undoOpen(stateBefore: SessionStateName): Promise<void> {
    const { state } = await this.settled();
    if (state === undefined || !isRunning(state)) return;
    try {
      await this.close({ logout: stateBefore === 'logged_out', reason: 'pairing_failed' });
    } catch (error) {
      this.options.log.warn(
        { deviceId: this.deviceId, err: error },
        'could not close the session a refused pairing request opened',
      );
    }
  }

  /** The linked account, while online. */
  account(): LinkedAccount | undefined {
    return this.state() === 'online' ? this.snapshot!.context.account : undefined;
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
    if (this.snapshot) return;
    try {
      this.engine ??= await this.options.resolveEngine();
      await this.rehydrate();
      // The record says running but no connection exists in this process: the process that ran it is gone.
      if (isRunning(stateOf(this.snapshot!))) await this.dispatch({ type: 'RESUME' });
      this.resumeBackoff.reset();
    } catch (error) {
      // Not loaded until resumed: the next command loads it again, and so does a retry while the store
      // refuses writes (a session recorded running must not stay without a connection).
      this.snapshot = undefined;
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

  /** State from the snapshot plus later events; live-only context (attempts, QR, account) starts empty. */
  private async rehydrate(): Promise<void> {
    const loaded = await loadSession(this.options.store, this.deviceId);
    this.record = loaded.record;
    this.revision = loaded.revision;
    this.snapshotRevision = loaded.snapshotRevision;
    const { phone, lastError } = loaded.record;
    this.snapshot = this.options.machine.resolveState({
      value: loaded.record.state,
      context: {
        attempts: 0,
        ...(phone === undefined ? {} : { phone }),
        ...(lastError === undefined ? {} : { lastError }),
      },
    });
  }

  /** Decide, record, then act. */
  private async dispatch(event: DeviceMachineEvent, conflictRetry = true): Promise<CommandResult> {
    await this.recordHeldChange();
    const before = this.snapshot!;
    const [after, actions] = transition(this.options.machine, before, event);
    const recordAction = actions.find((action) => action.type === 'record');
    let recorded: SessionTransition | undefined;
    if (recordAction) {
      const change = this.describeChange(
        before,
        after,
        (recordAction.params as { reason: string }).reason,
        retryDelayOf(actions),
      );
      try {
        recorded = await this.append(change);
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || !conflictRetry) throw error;
        // Someone else wrote this session: decide again on what the stream says now, and hold no
        // connection the stream does not call for.
        this.options.log.warn(
          { deviceId: this.deviceId, err: error },
          'session stream changed under the actor; reloading',
        );
        await this.rehydrate();
        if (!isRunning(stateOf(this.snapshot!))) {
          this.clearRetryTimer();
          await this.endConnection('close');
        }
        return this.dispatch(event, false);
      }
    }
    this.snapshot = after;
    for (const action of actions) await this.perform(action.type, action.params as Record<string, unknown> | undefined);
    if (recorded) {
      // Observers of `online` expect the connection to be usable: wait for connect() to hand it over.
      if (recorded.state === 'online' && !this.connection) await this.settle(this.pendingConnection);
      this.notify(recorded);
    }
    return {
      state: stateOf(after),
      changed: recorded !== undefined,
      ...(recorded ? { position: recorded.position } : {}),
    };
  }

  private describeChange(
    before: MachineSnapshot,
    after: MachineSnapshot,
    reason: string,
    retryDelayMs?: number,
  ): SessionStateChangedData {
    const state = stateOf(after);
    const { phone, lastError, attempts } = after.context;
    const reconnecting = state === 'reconnecting';
    return {
      deviceId: this.deviceId,
      state,
      previousState: stateOf(before),
      ...(phone === undefined ? {} : { phone }),
      reason,
      ...((state === 'failed' || reconnecting) && lastError ? { error: lastError } : {}),
      ...(reconnecting && attempts > 0 ? { attempt: attempts } : {}),
      // The actor is not pure: "now" plus the delay the machine decided.
      ...(reconnecting && retryDelayMs !== undefined
        ? { nextRetryAt: new Date(Date.now() + retryDelayMs).toISOString() }
        : {}),
    };
  }

  private async append(change: SessionStateChangedData): Promise<SessionTransition> {
    const event: SessionEvent = { type: 'SessionStateChanged', data: change };
    const result = await this.options.store.append(this.stream, [event], { expectedRevision: this.revision });
    this.revision = result.nextExpectedRevision;
    this.lastPosition = result.position;
    this.record = applySessionChange(this.record, change);
    if (this.revision - this.snapshotRevision >= (this.options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY))
      await this.saveSnapshot();
    return { ...change, position: result.position, revision: result.nextExpectedRevision };
  }

  private async saveSnapshot(): Promise<void> {
    try {
      await this.options.store.saveSnapshot(this.stream, { revision: this.revision, state: this.record });
      this.snapshotRevision = this.revision;
    } catch (error) {
      // Only costs a longer read next time.
      this.options.log.warn({ deviceId: this.deviceId, err: error }, 'could not save the session snapshot');
    }
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
            ? { type: 'ENGINE.FAILED', error: { code: (error as EngineError).code, message } }
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
      // Chat activity shares the inbound spool: it goes to the same stream, in the same order.
      activity: (activity) =>
        this.spools.inbound.write(`activity ${activity.kind}`, async () => sink.activity?.(this.deviceId, activity)),
      groups: (report) =>
        this.spools.groups.write(`group ${report.kind}`, async () =>
          this.options.groupReports?.(this.deviceId, report),
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
      if (this.stopped || !this.snapshot) return;
      this.intakeHeld = true;
      const before = this.snapshot;
      const [after, actions] = transition(this.options.machine, before, { type: 'STORE.UNAVAILABLE' });
      const recordAction = actions.find((action) => action.type === 'record');
      this.snapshot = after;
      if (recordAction)
        this.unrecorded = this.describeChange(before, after, (recordAction.params as { reason: string }).reason);
      for (const action of actions)
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
      if (this.stopped || !this.snapshot || this.spoolsBlocked()) return;
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
      const recorded = await this.append(change);
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
      const { epoch, event } = this.signals[0]!;
      if (epoch === this.epoch && !this.stopped && this.snapshot) {
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

const linkedAccountError = (state: SessionStateName | undefined) =>
  new DomainError(
    'pairing_unavailable',
    `the session is ${state}: pairing by code needs a session without a linked account (close it with logout first)`,
  );

/** The delay of the retry a decision schedules, if it schedules one. */
function retryDelayOf(actions: ReadonlyArray<{ type: string; params?: unknown }>): number | undefined {
  const retry = actions.find((action) => action.type === 'scheduleRetry');
  return retry ? Number((retry.params as { delayMs?: number } | undefined)?.delayMs ?? 0) : undefined;
}
