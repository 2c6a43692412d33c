/**
 * The read-decide-append loop, written once (docs/architecture.md, "Commands"). A command on a stream:
 * read the state (latest snapshot, or the state this handler last left, plus the events after it),
 * decide, append with the revision the state was read at, and on a conflict (another writer got in
 * between) read again and decide again. Commands on one stream are handled one at a time in this
 * process, so they do not conflict with each other.
 */
import { type EventStore, type NewEvent, WrongExpectedRevisionError } from '../eventstore/event-store.js';
import { type TypedEvent, eventGuard } from '../eventstore/typed-events.js';
import { type Decider, fold } from './decider.js';

export interface LoadedState<State> {
  state: State;
  /** Revision of the stream's last event (of any type); -1 when the stream does not exist. */
  revision: number;
  /** Revision the latest saved snapshot covers; -1 without one. */
  snapshotRevision: number;
}

export interface Handled<State, Event> {
  /** The state after the decision. */
  state: State;
  /** What was appended (`[]`: the command changed nothing). */
  events: Event[];
  revision: number;
  /** Global position of the append; 0 when nothing was appended. */
  position: number;
}

export interface SnapshotOptions<State> {
  /** A snapshot is saved once this many events followed the last one. */
  every: number;
  /** The state as JSON (default: as it is). */
  toJson?: (state: State) => unknown;
  fromJson?: (json: unknown) => State;
}

export interface CommandHandlerOptions<State, Command, Event extends TypedEvent> {
  store: EventStore;
  decider: Decider<State, Command, Event>;
  /**
   * Ids of a decision's events (undefined: a fresh one). Deterministic ids make an append that is tried
   * again after an unclear failure record once.
   */
  eventIds?: (events: readonly Event[], at: { streamId: string; revision: number }) => Array<string | undefined>;
  snapshots?: SnapshotOptions<State>;
  /** Streams whose state is kept in memory between commands (0: none). Their next command reads only the tail. */
  cacheSize?: number;
  /** Reads and decisions per command before a conflict is given up (default 5). */
  maxAttempts?: number;
  /** Called when a snapshot could not be saved (it only makes the next read longer). */
  onSnapshotError?: (error: unknown, streamId: string) => void;
}

const DEFAULT_MAX_ATTEMPTS = 5;

export class CommandHandler<State, Command, Event extends TypedEvent> {
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly cache = new Map<string, LoadedState<State>>();
  private readonly isOwn: ReturnType<typeof eventGuard<Event>>;

  constructor(private readonly options: CommandHandlerOptions<State, Command, Event>) {
    this.isOwn = eventGuard<Event>(options.decider.eventTypes);
  }

  /** Decides the command on the stream's current state and appends what it decided. */
  handle(streamId: string, command: Command): Promise<Handled<State, Event>> {
    const previous = this.queues.get(streamId) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(() => this.decideAndAppend(streamId, command));
    this.queues.set(streamId, current);
    const forget = () => {
      if (this.queues.get(streamId) === current) this.queues.delete(streamId);
    };
    current.then(forget, forget);
    return current;
  }

  /** The stream's current state, without deciding anything. */
  async load(streamId: string): Promise<LoadedState<State>> {
    const cached = this.cache.get(streamId);
    const base = cached ?? (await this.fromSnapshot(streamId));
    const tail = await this.options.store.readStream(streamId, { fromRevision: base.revision + 1 });
    if (tail.length === 0) return base;
    const own = tail.filter(this.isOwn) as Event[];
    return { ...base, state: fold(this.options.decider, base.state, own), revision: tail[tail.length - 1]!.revision };
  }

  private async decideAndAppend(streamId: string, command: Command): Promise<Handled<State, Event>> {
    const { store, decider } = this.options;
    const maxAttempts = this.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    for (let attempt = 1; ; attempt++) {
      const loaded = await this.load(streamId);
      const events = decider.decide(command, loaded.state);
      if (events.length === 0) {
        this.remember(streamId, loaded);
        return { state: loaded.state, events, revision: loaded.revision, position: 0 };
      }
      const ids = this.options.eventIds?.(events, { streamId, revision: loaded.revision });
      const toAppend: NewEvent[] = events.map((event, index) => {
        const id = ids?.[index];
        return id === undefined ? { type: event.type, data: event.data } : { id, type: event.type, data: event.data };
      });
      let appended;
      try {
        appended = await store.append(streamId, toAppend, { expectedRevision: loaded.revision < 0 ? 'no_stream' : loaded.revision });
      } catch (error) {
        this.cache.delete(streamId);
        if (error instanceof WrongExpectedRevisionError && attempt < maxAttempts) continue;
        throw error;
      }
      const state = fold(decider, loaded.state, events);
      const after: LoadedState<State> = { state, revision: appended.nextExpectedRevision, snapshotRevision: loaded.snapshotRevision };
      // The store answered an earlier append of the same ids: what it holds is not what was just decided on.
      if (appended.nextExpectedRevision !== loaded.revision + events.length) this.cache.delete(streamId);
      else {
        this.remember(streamId, after);
        await this.maybeSnapshot(streamId, after);
      }
      return { state, events, revision: appended.nextExpectedRevision, position: appended.position };
    }
  }

  private async fromSnapshot(streamId: string): Promise<LoadedState<State>> {
    const { snapshots, decider, store } = this.options;
    const snapshot = snapshots ? await store.loadSnapshot(streamId) : null;
    if (!snapshot) return { state: decider.initialState(), revision: -1, snapshotRevision: -1 };
    const state = snapshots?.fromJson ? snapshots.fromJson(snapshot.state) : (snapshot.state as State);
    return { state, revision: snapshot.revision, snapshotRevision: snapshot.revision };
  }

  private remember(streamId: string, loaded: LoadedState<State>): void {
    const size = this.options.cacheSize ?? 0;
    if (size <= 0) return;
    this.cache.delete(streamId); // re-inserted last: the Map's order is the order of use
    if (this.cache.size >= size) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(streamId, loaded);
  }

  private async maybeSnapshot(streamId: string, loaded: LoadedState<State>): Promise<void> {
    const snapshots = this.options.snapshots;
    if (!snapshots || loaded.revision - loaded.snapshotRevision < snapshots.every) return;
    try {
      const state = snapshots.toJson ? snapshots.toJson(loaded.state) : loaded.state;
      await this.options.store.saveSnapshot(streamId, { revision: loaded.revision, state });
      loaded.snapshotRevision = loaded.revision;
    } catch (error) {
      this.options.onSnapshotError?.(error, streamId);
    }
  }
}
