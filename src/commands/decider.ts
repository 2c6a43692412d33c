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

/**
 * A decider whose decisions also answer their caller (the outbox: the message queued, what to send next, or
 * that an Idempotency-Key was used already): `decide` returns the events and a result, as a value, never as
 * control flow thrown. Refusals are DomainErrors as with `Decider`.
 */
export interface AnsweringDecider<State, Command, Event extends TypedEvent, Result> {
  readonly eventTypes: ReadonlySet<string>;
  initialState(): State;
  /** Pure: never changes `state` in place. */
  evolve(state: State, event: Event): State;
  /** Pure: the events that record the command (`[]` when it changes nothing) and the caller's answer. */
  decide(command: Command, state: State): Decision<Event, Result>;
}
