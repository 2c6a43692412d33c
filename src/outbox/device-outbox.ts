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
  /** The lease the owner acts under (its drainer's tries): the append is refused once the lease moved. */
  fence: Fence | undefined;
}

export interface DeviceOutboxOptions {
  /** A snapshot is saved once at least this many events (and several times the backlog) followed the last one. */
  snapshotEvery?: number;
  /** Called after every append that changed the outbox. */
  onChange?: (deviceId: string) => void;
  onSnapshotError?: (error: unknown) => void;
}

const isOutboxEvent = eventGuard<OutboxEvent>(OUTBOX_EVENT_TYPES);
const MAX_CONFLICTS = 10;
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
  private readonly stream: string;

  private constructor(
    private readonly store: EventStore,
    readonly deviceId: string,
    private readonly options: DeviceOutboxOptions,
  ) {
    this.stream = outboxStream(deviceId);
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
      const command: Command = { decide, resolve: resolve as Command['resolve'], reject, conflicts: 0, fence };
      if (this.stale || this.recovering) {
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
        command.resolve({ result, position: outcome.position });
        this.options.onChange?.(this.deviceId);
        this.maybeSnapshot();
        this.recoverWhenIdle();
      },
      (error: unknown) => {
        this.inFlight -= 1;
        this.stale = true;
        if (error instanceof WrongExpectedRevisionError && command.conflicts++ < MAX_CONFLICTS) this.refused.push(command);
        else command.reject(error);
        this.recoverWhenIdle();
      },
    );
  }

  /** Once no append is in flight: read the state again, then decide the refused and waiting commands in order. */
  private recoverWhenIdle(): void {
    if (!this.stale || this.recovering || this.inFlight > 0) return;
    this.recovering = true;
    this.reload().then(
      () => {
        this.recovering = false;
        const again = [...this.refused.splice(0), ...this.waiting.splice(0)];
        for (const command of again) {
          if (this.stale) this.waiting.push(command);
          else this.run(command);
        }
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
    this.stale = true;
    this.recoverWhenIdle();
    return true;
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
