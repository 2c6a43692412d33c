/**
 * The read-decide-append loop, written once (docs/architecture.md, "Commands"). A command on a stream is
 * decided on the state this handler last left (kept for `cacheSize` streams) or on the state read (latest
 * snapshot plus the events after it), appended with the revision that state is at, and on a conflict decided
 * again on the tail read. Commands on one stream are handled one at a time in this process.
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
  /**
   * Saved without holding the command up (it only shortens a later read): a command of many events (a part of a
   * history chunk) then waits for one flush to disk, not two. A failed save is tried again `every` events later.
   */
  background?: boolean;
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
  /**
   * Streams whose state is kept in memory between commands (0: none). Their next command is decided on it
   * without a read; the tail is read only when the append is refused, or the decision is empty or a refusal.
   */
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
    return { ...base, state: fold(this.options.decider, base.state, own), revision: tail[tail.length - 1].revision };
  }

  private async decideAndAppend(streamId: string, command: Command): Promise<Handled<State, Event>> {
    const { store, decider } = this.options;
    const maxAttempts = this.options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    let refused = false;
    for (let attempt = 1; ; attempt++) {
      // The state this handler last left is decided on without reading the stream: the expected revision
      // makes the store refuse the append when another writer got in since, and then the tail is read.
      const cached = refused ? undefined : this.cache.get(streamId);
      let loaded = cached;
      let events = cached && this.decideOnCached(command, cached.state);
      if (!loaded || !events) {
        loaded = await this.load(streamId);
        events = decider.decide(command, loaded.state);
      }
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
        appended = await store.append(streamId, toAppend, {
          expectedRevision: loaded.revision < 0 ? 'no_stream' : loaded.revision,
        });
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError && attempt < maxAttempts) {
          // What is cached is still a prefix of the stream: the next attempt reads only the tail after it.
          refused = true;
          continue;
        }
        this.cache.delete(streamId);
        throw error;
      }
      const state = fold(decider, loaded.state, events);
      const after: LoadedState<State> = {
        state,
        revision: appended.nextExpectedRevision,
        snapshotRevision: loaded.snapshotRevision,
      };
      // The store answered an earlier append of the same ids: what it holds is not what was just decided on.
      if (appended.nextExpectedRevision !== loaded.revision + events.length) this.cache.delete(streamId);
      else {
        this.remember(streamId, after);
        await this.maybeSnapshot(streamId, after);
      }
      return { state, events, revision: appended.nextExpectedRevision, position: appended.position };
    }
  }

  /**
   * The decision on a cached state, or undefined when it must be taken on the stream's tail: an empty
   * decision or a refusal may only say that the cache has not seen another writer's events (an append
   * would have been refused and told so; these would not).
   */
  private decideOnCached(command: Command, state: State): Event[] | undefined {
    try {
      const events = this.options.decider.decide(command, state);
      return events.length === 0 ? undefined : events;
    } catch {
      return undefined;
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
      const saved = this.options.store.saveSnapshot(streamId, { revision: loaded.revision, state });
      if (snapshots.background) {
        loaded.snapshotRevision = loaded.revision;
        saved.catch((error: unknown) => this.options.onSnapshotError?.(error, streamId));
        return;
      }
      await saved;
      loaded.snapshotRevision = loaded.revision;
    } catch (error) {
      this.options.onSnapshotError?.(error, streamId);
    }
  }
}
