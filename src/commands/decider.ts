/**
 * The shape of every write path (docs/architecture.md, "Commands"): a stream's state is the fold of its
 * events by the stream's one `evolve`; a command is decided by a pure `decide` (state + command → events,
 * or a DomainError); the events are appended with the revision the state was read at.
 */
import type { TypedEvent } from '../eventstore/typed-events.js';

export interface Decider<State, Command, Event extends TypedEvent> {
  /** Event types of this stream; events of other types in it are passed over. */
  readonly eventTypes: ReadonlySet<string>;
  initialState(): State;
  /** Pure: never changes `state` in place. */
  evolve(state: State, event: Event): State;
  /** Pure: the events that record the command, `[]` when it changes nothing; throws a DomainError to refuse. */
  decide(command: Command, state: State): Event[];
}

/** Folds events into a state with the decider's evolve. */
export function fold<State, Event extends TypedEvent>(
  decider: Pick<Decider<State, never, Event>, 'evolve'>,
  state: State,
  events: readonly Event[],
): State {
  let folded = state;
  for (const event of events) folded = decider.evolve(folded, event);
  return folded;
}

/** A decision that also answers its caller (the outbox's commands answer with the queued message, what to send next…). */
export interface Decision<Event, Result> {
  events: Event[];
  result: Result;
}

/** A command already bound to its arguments, decided on a state: pure, as `Decider.decide`. */
export type DecideWith<State, Event, Result> = (state: State) => Decision<Event, Result>;
