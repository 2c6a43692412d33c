/**
 * The one writer of a device's outbox stream in this process (invariant 3): every command, receipts included,
 * is decided by the outbox decider against the folded state and appended with the expected revision. Appends
 * are pipelined, so concurrent sends share the store's group commit; a refused append fails with every one
 * after it, and those commands are decided again in order. With several processes appends go one at a time
 * and conflicts are folded in or retried: docs/architecture.md, "Several processes" (Contention).
 */
import type { Decision } from '../../commands/decider.js';
import {
  type AppendResult,
  type EventStore,
  type Fence,
  type NewEvent,
  type StoredEvent,
  WrongExpectedRevisionError,
} from '../../eventstore/event-store.js';
import { DomainError } from '../../errors/domain-error.js';
import { outboxStream } from '../../messages/message-events.js';
import type { OutboxEvent, OutboxNewEvent } from './outbox-events.js';
import { OUTBOX_EVENT_TYPES } from './outbox-events.js';
import { eventGuard } from '../../eventstore/typed-events.js';
import { type OutboxCommand, type OutboxResultOf, outboxDecider } from './outbox-decider.js';
import { OutboxState, type OutboxSnapshotState, type Undo } from './outbox-state.js';

/**
 * A command bound to the decider, as the executor runs it. The decider's decide is pure; the events it
 * decides are folded into the one state in place (OutboxState.apply, the decider's evolve without the copy):
 * the backlog can be large and every send decides on it.
 */
type Decide = (state: OutboxState) => Decision<OutboxNewEvent, unknown>;

export interface Executed<R> {
  result: R;
  /** Global position of the append that carried the events (0 when the command appended nothing). */
  position: number;
}

interface Command {
  decide: Decide;
  resolve: (value: Executed<unknown>) => void;
  reject: (error: unknown) => void;
  /** When it arrived (ms): it is decided again after conflicts until CONFLICT_DEADLINE_MS after that. */
  arrivedAt: number;
  /** The lease the owner acts under (its drainer's tries): the append is refused once the lease moved. */
  fence: Fence | undefined;
}

/** A command of an append that is not pipelined, with its latest decision. */
interface Decided {
  command: Command;
  result: unknown;
  events: OutboxNewEvent[];
  /** Decided again (onConflict), the command was refused. */
  error?: unknown;
}

/** The one append in flight when appends are not pipelined. */
interface Batch {
  decided: Decided[];
  /** The revision it expects (after onConflict: the stream's, when it was decided again). */
  expected: number;
  /** Takes back its decisions in the state, newest last; undefined when one cannot be taken back. */
  undo: Undo[] | undefined;
  /** The store committed it (it may not be durable yet): the next append may be decided. */
  committed: boolean;
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
/**
 * A command whose append another writer's beat is read again and decided again, however often, until this long
 * after it arrived: then it answers `busy` (503, nothing recorded), never the conflict (409). Through an election
 * both processes' appends to one outbox can keep refusing each other while reads are slow, and a client told 409
 * had nothing to correct; this is shorter than a client's usual 30 s timeout.
 */
const CONFLICT_DEADLINE_MS = 20_000;
/** Back-off before reading the stream again after a conflict: none after the first, then up to BASE · 2^(conflicts in a row − 2), at most MAX. */
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
  /** The state is what the store held at `revision`, and the stream may have moved on: read its tail before deciding. */
  private behind = false;
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

  /** Decides the command now (outboxDecider) and appends; resolves once the events are durable. */
  execute<C extends OutboxCommand>(command: C, fence?: Fence): Promise<Executed<OutboxResultOf<C>>> {
    return this.enqueue((state) => outboxDecider.decide(command, state), fence) as Promise<Executed<OutboxResultOf<C>>>;
  }

  /** Resolves once every command before it is decided, on a state read again if it had to be. */
  async caughtUp(): Promise<void> {
    await this.enqueue(() => ({ events: [], result: undefined }));
  }

  private enqueue(decide: Decide, fence?: Fence): Promise<Executed<unknown>> {
    return new Promise<Executed<unknown>>((resolve, reject) => {
      const command: Command = {
        decide,
        resolve,
        reject,
        arrivedAt: this.now(),
        fence,
      };
      if (this.pipeline && !this.stale && !this.behind && !this.recovering) this.run(command);
      else {
        this.waiting.push(command);
        this.runWaiting();
        this.recoverWhenIdle();
      }
    });
  }

  private run(command: Command): void {
    let decision: Decision<OutboxNewEvent, unknown>;
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
    const appended = this.store.append(
      this.stream,
      stored,
      command.fence ? { expectedRevision, fence: command.fence } : { expectedRevision },
    );
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
        else command.reject(this.answerTo(error));
        this.recoverWhenIdle();
      },
    );
  }

  /** Decides what waits, in order: all of it when pipelining, else the next append's worth. */
  private runWaiting(): void {
    while (
      this.waiting.length > 0 &&
      !this.stale &&
      !this.behind &&
      !this.recovering &&
      (this.pipeline || this.inFlight === 0)
    ) {
      if (this.pipeline) this.run(this.waiting.shift()!);
      else this.runBatch();
    }
  }

  /**
   * Not pipelined: decides the waiting commands in order on one state, up to a fenced one or one whose events
   * carry their own ids (those go alone), and appends their events together.
   */
  private runBatch(): void {
    const decided: Decided[] = [];
    let undo: Undo[] | undefined = [];
    while (this.waiting.length > 0) {
      const command = this.waiting[0];
      if (decided.length > 0 && command.fence) break;
      let decision: Decision<OutboxNewEvent, unknown>;
      try {
        decision = command.decide(this.state);
      } catch (error) {
        this.waiting.shift();
        command.reject(error);
        continue;
      }
      const ownIds = carriesIds(decision.events);
      // Decided again in the next append (deciding is pure).
      if (decided.length > 0 && ownIds) break;
      this.waiting.shift();
      undo = this.applyAll(decision.events, undo);
      decided.push({ command, result: decision.result, events: decision.events });
      if (command.fence || ownIds) break;
    }
    const events = decided.flatMap((d) => d.events);
    if (events.length === 0) {
      // Nothing to append, but the answers may rest on an append committed and not yet durable.
      const answer = () => {
        for (const { command, result } of decided) command.resolve({ result, position: 0 });
      };
      if (!this.lastAppend) answer();
      else this.lastAppend.then(answer, answer);
      return;
    }
    const batch: Batch = { decided, expected: this.headRevision, undo, committed: false };
    this.headRevision += events.length;
    this.inFlight += 1;
    const fence = decided[0].command.fence;
    const appended = this.store.append(this.stream, events, {
      expectedRevision: batch.expected < 0 ? 'no_stream' : batch.expected,
      ...(fence ? { fence } : {}),
      onConflict: (newer) => this.decideAgainAfter(batch, newer),
      // The next append is decided and committed while this one is flushed: both ride one flush.
      onCommitted: (outcome) => this.committed(batch, outcome),
    });
    this.lastAppend = appended;
    appended.then(
      (outcome) => {
        this.committed(batch, outcome);
        for (const { command, result, error } of batch.decided) {
          if (error === undefined) command.resolve({ result, position: outcome.position });
          else command.reject(error);
        }
        this.options.onChange?.(this.deviceId);
        this.maybeSnapshot();
      },
      (error: unknown) => {
        if (batch.committed) {
          // In the file, but its flush failed: the state holds it, as the store does; its commands fail.
          for (const { command } of batch.decided) command.reject(error);
          return;
        }
        this.inFlight -= 1;
        if (batch.undo) {
          // Taken back, the state is again what the store held at `revision`: only the tail is read.
          for (const undoOne of batch.undo.reverse()) undoOne();
          this.headRevision = this.revision;
          this.behind = true;
        } else this.stale = true;
        for (const { command } of batch.decided) {
          if (error instanceof WrongExpectedRevisionError && this.decideAgain(command)) this.refused.push(command);
          else command.reject(this.answerTo(error));
        }
        this.recoverWhenIdle();
      },
    );
  }

  /** A batch's append is in the store (committed, perhaps not durable yet): what waits may be decided. */
  private committed(batch: Batch, outcome: AppendResult): void {
    if (batch.committed) return;
    batch.committed = true;
    this.inFlight -= 1;
    const count = batch.decided.reduce((sum, d) => sum + d.events.length, 0);
    // An event id the store had already: it answered the first append's revision, not ours.
    if (outcome.nextExpectedRevision !== batch.expected + count) this.stale = true;
    else this.revision = outcome.nextExpectedRevision;
    this.conflictStreak = 0;
    this.runWaiting();
    this.recoverWhenIdle();
  }

  /**
   * onConflict of a batch's append: another writer appended `newer` first. The batch's decisions are taken back,
   * `newer` folded, and its commands decided again in order; undefined (the append is refused) when the
   * decisions cannot be taken back or `newer` is not what follows the state.
   */
  private decideAgainAfter(batch: Batch, newer: readonly StoredEvent[]): OutboxNewEvent[] | undefined {
    if (!batch.undo || this.revision !== batch.expected || newer[0]?.revision !== batch.expected + 1) return undefined;
    for (const undoOne of batch.undo.reverse()) undoOne();
    batch.undo = [];
    this.fold(newer);
    batch.expected = this.revision;
    this.headRevision = this.revision;
    for (const entry of batch.decided) {
      entry.error = undefined;
      try {
        const decision = entry.command.decide(this.state);
        entry.result = decision.result;
        entry.events = decision.events;
      } catch (error) {
        entry.error = error;
        entry.events = [];
      }
      // Events with their own ids must go alone: refused, the commands are decided again after a read.
      if (batch.decided.length > 1 && carriesIds(entry.events)) {
        batch.undo = undefined;
        return undefined;
      }
      batch.undo = this.applyAll(entry.events, batch.undo);
    }
    const events = batch.decided.flatMap((d) => d.events);
    this.headRevision += events.length;
    return events;
  }

  /** Applies the events; the undo log grows, or is undefined once one event cannot be taken back. */
  private applyAll(events: readonly OutboxNewEvent[], undo: Undo[] | undefined): Undo[] | undefined {
    for (const event of events) {
      const undoOne = this.state.applyUndoable(event);
      if (undoOne && undo) undo.push(undoOne);
      else undo = undefined;
    }
    return undo;
  }

  /** A command whose append lost to another writer: decided again while its deadline has not passed. */
  private decideAgain(command: Command): boolean {
    return this.now() - command.arrivedAt < CONFLICT_DEADLINE_MS;
  }

  /** A conflict past the deadline is `busy` (try again later), not a conflict the caller could correct. */
  private answerTo(error: unknown): unknown {
    if (!(error instanceof WrongExpectedRevisionError)) return error;
    return new DomainError(
      'busy',
      `other writers kept changing the outbox of device ${this.deviceId} for ${CONFLICT_DEADLINE_MS / 1000} s (an event store election?); nothing was recorded; try again with the same Idempotency-Key`,
      { retryAfterSeconds: 1, reason: 'outbox_contended', cause: error },
    );
  }

  /**
   * Once no append is in flight: read the state again (after a jittered back-off if appends were refused),
   * then decide the refused and waiting commands in order.
   */
  private recoverWhenIdle(): void {
    if ((!this.stale && !this.behind) || this.recovering || this.inFlight > 0) return;
    this.recovering = true;
    let pause = 0;
    if (this.refused.length > 0) {
      this.conflictStreak += 1;
      // The first conflict is read again at once: the other writer's append is in, and reading it is all it takes.
      if (this.conflictStreak > 1)
        pause =
          this.random() * Math.min(CONFLICT_BACKOFF_MAX_MS, CONFLICT_BACKOFF_BASE_MS * 2 ** (this.conflictStreak - 2));
    }
    // Flags cleared now: an invalidation during the read sets them again, and is read after it.
    const full = this.stale;
    this.stale = false;
    this.behind = false;
    const read = () => (full ? this.reload() : this.catchUp());
    const reloaded = pause > 0 ? new Promise<void>((resolve) => setTimeout(resolve, pause)).then(read) : read();
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
        if (full) this.stale = true;
        else this.behind = true;
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
    this.behind = true;
    this.recoverWhenIdle();
    return true;
  }

  /**
   * The log shows an event of this stream that another process appended. When it is the next one and nothing is in
   * flight or being read, it is folded at once: no read of the stream, and the next append meets no conflict (with
   * sends through every process, nearly every append met one inside the store's write lock: issue 30). Else, with
   * `readIfBehind` (the device's owner, whose drainer must see it), read before the next decision (noteStored).
   * Answers `folded`, `behind` (to be read), or false (nothing new).
   */
  noteEvent(event: StoredEvent, readIfBehind: boolean): 'folded' | 'behind' | false {
    if (event.revision <= this.headRevision) return false;
    const idle = this.inFlight === 0 && this.revision === this.headRevision && !this.stale && !this.behind;
    if (idle && !this.recovering && event.revision === this.revision + 1) {
      this.fold([event]);
      this.headRevision = this.revision;
      return 'folded';
    }
    return readIfBehind && this.noteStored(event.revision) ? 'behind' : false;
  }

  /** Reads the stream again before the next decision (it may have moved without this process noticing). */
  invalidate(): void {
    this.stale = true;
    this.recoverWhenIdle();
  }

  /** Reads what other writers appended after `revision`, onto a state that is what the store held there. */
  private async catchUp(): Promise<void> {
    const tail = await this.store.readStream(this.stream, { fromRevision: this.revision + 1 });
    this.fold(tail);
    this.headRevision = this.revision;
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
    const every = Math.max(
      this.options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY,
      SNAPSHOT_BACKLOG_FACTOR * this.state.size,
    );
    if (this.revision - this.snapshotRevision < every) return;
    this.snapshotRevision = this.revision;
    const snapshot = { revision: this.revision, state: this.state.toSnapshot() };
    this.store.saveSnapshot(this.stream, snapshot).catch((error: unknown) => this.options.onSnapshotError?.(error));
  }
}

const carriesIds = (events: readonly OutboxNewEvent[]) => events.some((event) => event.id !== undefined);
