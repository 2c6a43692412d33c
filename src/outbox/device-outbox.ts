/**
 * The one writer of a device's outbox stream in this process (docs/architecture.md, invariant 3): every command, receipts
 * included, is decided here against the state folded from the stream and appended with the stream's
 * expected revision.
 *
 * Commands are decided at once, in the order they arrive, and their appends pipelined: each is submitted
 * right away with the revision the appends before it will leave, so concurrent sends to one device share
 * the store's group commit instead of waiting for each other's. If an append is refused (another writer
 * got in between), it and every append submitted after it fail; once none is in flight the state is read
 * again and those commands are decided again, in their order.
 *
 * Several processes append to one outbox (sends through any process, the owner's drainer and receipts). Their
 * appends are not pipelined then (see DeviceOutboxOptions.pipeline), and a writer whose append lost backs off,
 * a random pause that doubles with each conflict in a row, before it reads again, so that writers that collided
 * do not collide again at once; a command is decided again until it has lost MIN_CONFLICT_TRIES times and
 * CONFLICT_DEADLINE_MS have passed since its first loss.
 */
import type { DecideWith, Decision as CommandDecision } from '../commands/decider.js';
import { type EventStore, type Fence, type NewEvent, type StoredEvent, WrongExpectedRevisionError } from '../eventstore/event-store.js';
import { outboxStream } from '../messages/message-events.js';
import type { OutboxEvent } from './outbox-events.js';
import { OUTBOX_EVENT_TYPES } from './outbox-events.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { OutboxState, type OutboxSnapshotState } from './outbox-state.js';

/** An event to append; `id` where a retry could append it twice (e.g. receipts). */
export type OutboxNewEvent = OutboxEvent & { id?: string };

export type Decision<R> = CommandDecision<OutboxNewEvent, R>;

/**
 * Decides from the current state (outbox-decisions.ts); throws a DomainError to refuse, and then appends
 * nothing. The outbox's evolve is OutboxState.apply, which changes the state in place: the backlog can be
 * large and every send decides on it, so it is not copied per event.
 */
export type Decide<R> = DecideWith<OutboxState, OutboxNewEvent, R>;

export interface Executed<R> {
  result: R;
  /** Global position of the append that carried the events (0 when the command appended nothing). */
  position: number;
}

interface Command {
  decide: Decide<unknown>;
  resolve: (value: Executed<unknown>) => void;
  reject: (error: unknown) => void;
  /** Times its append was refused for a conflict. */
  conflicts: number;
  /** When its append was first refused for a conflict (ms). */
  firstConflictAt: number | undefined;
  /** The lease the owner acts under (its drainer's tries): the append is refused once the lease moved. */
  fence: Fence | undefined;
}

export interface DeviceOutboxOptions {
  /** A snapshot is saved once at least this many events (and several times the backlog) followed the last one. */
  snapshotEvery?: number;
  /** Called after every append that changed the outbox. */
  onChange?: (deviceId: string) => void;
  onSnapshotError?: (error: unknown) => void;
  /**
   * Other writers append to the stream too (several processes): an append is submitted only once the one
   * before it is in. Pipelined appends are not safe then: when one is refused, an append chained after it can
   * still match the stream's revision (another writer's append filled the gap) and go in, decided on a state
   * that held the refused events.
   */
  pipeline?: boolean;
  /** Source of the back-off's jitter (tests fix it). */
  random?: () => number;
  now?: () => number;
}

const isOutboxEvent = eventGuard<OutboxEvent>(OUTBOX_EVENT_TYPES);
/** A command refused for conflicts is decided again until both are exhausted (then it answers the conflict). */
const MIN_CONFLICT_TRIES = 10;
const CONFLICT_DEADLINE_MS = 10_000;
/** Back-off before reading the stream again after a conflict: up to BASE · 2^(conflicts in a row − 1), at most MAX. */
const CONFLICT_BACKOFF_BASE_MS = 4;
const CONFLICT_BACKOFF_MAX_MS = 250;
const DEFAULT_SNAPSHOT_EVERY = 1_000;
const SNAPSHOT_BACKLOG_FACTOR = 8;

export class DeviceOutbox {
  private state = new OutboxState();
  /** Last revision the store confirmed. */
  private revision = -1;
  /** Revision once every append in flight is in: what the next append expects. */
  private headRevision = -1;
  private snapshotRevision = -1;
  private inFlight = 0;
  /** The latest append submitted: answers that append nothing wait for it (they may rest on it). */
  private lastAppend: Promise<unknown> | undefined;
  /** The state may hold events the store refused: decide nothing until it is read again. */
  private stale = false;
  private recovering = false;
  /** Commands to decide again after the reload (their appends were refused), then those that arrived meanwhile. */
  private refused: Command[] = [];
  private waiting: Command[] = [];
  /** Recoveries in a row that followed a conflict (reset by an accepted append): sets the back-off. */
  private conflictStreak = 0;
  private readonly stream: string;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly pipeline: boolean;

  private constructor(
    private readonly store: EventStore,
    readonly deviceId: string,
    private readonly options: DeviceOutboxOptions,
  ) {
    this.stream = outboxStream(deviceId);
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.pipeline = options.pipeline ?? true;
  }

  /** Rebuilds the outbox from its latest snapshot and the events after it (docs/architecture.md, invariant 6). */
  static async load(store: EventStore, deviceId: string, options: DeviceOutboxOptions = {}): Promise<DeviceOutbox> {
    const outbox = new DeviceOutbox(store, deviceId, options);
    await outbox.reload();
    return outbox;
  }

  /** The state with every decision so far applied: read it, never keep it across an await (a reload replaces it). */
  get current(): OutboxState {
    return this.state;
  }

  /** Decides now and appends; resolves once the events are durable. */
  execute<R>(decide: Decide<R>, fence?: Fence): Promise<Executed<R>> {
    return new Promise<Executed<R>>((resolve, reject) => {
      const command: Command = { decide, resolve: resolve as Command['resolve'], reject, conflicts: 0, firstConflictAt: undefined, fence };
      if (this.stale || this.recovering || (!this.pipeline && this.inFlight > 0)) {
        this.waiting.push(command);
        this.recoverWhenIdle();
      } else this.run(command);
    });
  }

  private run(command: Command): void {
    let decision: Decision<unknown>;
    try {
      decision = command.decide(this.state);
    } catch (error) {
      command.reject(error);
      return;
    }
    const { events, result } = decision;
    if (events.length === 0) {
      // Nothing to append, but the answer may rest on appends still in flight.
      const answer = () => command.resolve({ result, position: 0 });
      if (this.inFlight === 0 || !this.lastAppend) answer();
      else this.lastAppend.then(answer, answer);
      return;
    }
    for (const event of events) this.state.apply(event);
    const expected = this.headRevision;
    this.headRevision += events.length;
    this.inFlight += 1;
    // Events without an id get the store's own (time-ordered, see newEventId): an id given here would be
    // looked up as a possible repeat on every append, and only ids a retry could append twice need that.
    const stored: readonly NewEvent[] = events;
    const expectedRevision = expected < 0 ? 'no_stream' : expected;
    const appended = this.store.append(this.stream, stored, command.fence ? { expectedRevision, fence: command.fence } : { expectedRevision });
    this.lastAppend = appended;
    appended.then(
      (outcome) => {
        this.inFlight -= 1;
        // An event id the store had already: it answered the first append's revision, not ours.
        if (outcome.nextExpectedRevision !== expected + events.length) this.stale = true;
        else this.revision = Math.max(this.revision, outcome.nextExpectedRevision);
        this.conflictStreak = 0;
        command.resolve({ result, position: outcome.position });
        this.options.onChange?.(this.deviceId);
        this.maybeSnapshot();
        this.runWaiting();
        this.recoverWhenIdle();
      },
      (error: unknown) => {
        this.inFlight -= 1;
        this.stale = true;
        if (error instanceof WrongExpectedRevisionError && this.decideAgain(command)) this.refused.push(command);
        else command.reject(error);
        this.recoverWhenIdle();
      },
    );
  }

  /** Decides what waits, in order: all of it when pipelining, else until one appends. */
  private runWaiting(): void {
    while (this.waiting.length > 0 && !this.stale && !this.recovering && (this.pipeline || this.inFlight === 0)) this.run(this.waiting.shift()!);
  }

  /** A command whose append lost to another writer: decided again unless it has lost long and often enough. */
  private decideAgain(command: Command): boolean {
    const now = this.now();
    command.firstConflictAt ??= now;
    command.conflicts += 1;
    return command.conflicts < MIN_CONFLICT_TRIES || now - command.firstConflictAt < CONFLICT_DEADLINE_MS;
  }

  /**
   * Once no append is in flight: read the state again (after a jittered back-off if appends were refused),
   * then decide the refused and waiting commands in order.
   */
  private recoverWhenIdle(): void {
    if (!this.stale || this.recovering || this.inFlight > 0) return;
    this.recovering = true;
    let pause = 0;
    if (this.refused.length > 0) {
      this.conflictStreak += 1;
      pause = this.random() * Math.min(CONFLICT_BACKOFF_MAX_MS, CONFLICT_BACKOFF_BASE_MS * 2 ** (this.conflictStreak - 1));
    }
    const reloaded = pause > 0 ? new Promise<void>((resolve) => setTimeout(resolve, pause)).then(() => this.reload()) : this.reload();
    reloaded.then(
      () => {
        this.recovering = false;
        this.waiting = [...this.refused.splice(0), ...this.waiting];
        this.runWaiting();
        this.recoverWhenIdle();
      },
      (error: unknown) => {
        // The store cannot be read: fail what waits; the next command tries again.
        this.recovering = false;
        for (const command of [...this.refused.splice(0), ...this.waiting.splice(0)]) command.reject(error);
      },
    );
  }

  /**
   * The log shows an event of this stream at `revision` (several processes: another one appended to it).
   * Beyond what this outbox has decided, it is read again before the next decision.
   */
  noteStored(revision: number): boolean {
    if (revision <= this.headRevision) return false;
    this.invalidate();
    return true;
  }

  /** Reads the stream again before the next decision (it may have moved without this process noticing). */
  invalidate(): void {
    this.stale = true;
    this.recoverWhenIdle();
  }

  private async reload(): Promise<void> {
    const snapshot = await this.store.loadSnapshot<OutboxSnapshotState>(this.stream);
    const state = snapshot ? OutboxState.fromSnapshot(snapshot.state) : new OutboxState();
    const tail = await this.store.readStream(this.stream, { fromRevision: snapshot ? snapshot.revision + 1 : 0 });
    this.state = state;
    this.revision = snapshot?.revision ?? -1;
    this.snapshotRevision = this.revision;
    this.fold(tail);
    this.headRevision = this.revision;
    this.stale = false;
  }

  private fold(events: readonly StoredEvent[]): void {
    for (const event of events) {
      if (isOutboxEvent(event)) this.state.apply(event);
      this.revision = event.revision;
    }
  }

  /**
   * A snapshot costs as much as the backlog: one is taken only once several times that many events
   * followed the last (a constant cost per event, and a reload proportional to the backlog), and only
   * while no append is in flight, when the state is exactly what the store holds.
   */
  private maybeSnapshot(): void {
    if (this.inFlight > 0 || this.stale || this.revision !== this.headRevision) return;
    const every = Math.max(this.options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY, SNAPSHOT_BACKLOG_FACTOR * this.state.size);
    if (this.revision - this.snapshotRevision < every) return;
    this.snapshotRevision = this.revision;
    const snapshot = { revision: this.revision, state: this.state.toSnapshot() };
    this.store.saveSnapshot(this.stream, snapshot).catch((error: unknown) => this.options.onSnapshotError?.(error));
  }
}
