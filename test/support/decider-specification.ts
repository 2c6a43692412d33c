/**
 * Given / when / then for deciders, without I/O (as event-driven-io/emmett's DeciderSpecification):
 * given the events already in the stream, when a command is decided, then these events (or this error).
 * A decider whose decisions also answer their caller (AnsweringDecider: the outbox) is checked the same way,
 * and its result too where the test names one.
 */
import { expect } from 'vitest';
import { type AnsweringDecider, type Decider, type Decision, fold } from '../../src/commands/decider.js';
import { DomainError, type DomainErrorCode } from '../../src/errors/domain-error.js';
import type { TypedEvent } from '../../src/eventstore/typed-events.js';

type AnyDecider<State, Command, Event extends TypedEvent, Result> =
  Decider<State, Command, Event> | AnsweringDecider<State, Command, Event, Result>;

export function deciderSpecification<State, Command, Event extends TypedEvent, Result = never>(
  decider: AnyDecider<State, Command, Event, Result>,
) {
  return {
    given(events: readonly Event[]) {
      const state = fold(decider, decider.initialState(), events);
      return {
        /** The state the events fold into (for a check of the state itself). */
        state,
        when(command: Command) {
          const decide = (): Decision<Event, Result | undefined> => {
            const decided = decider.decide(command, state);
            return Array.isArray(decided) ? { events: decided, result: undefined } : decided;
          };
          return {
            /** These events; and this result, when one is given (asymmetric matchers welcome). */
            then(expected: readonly Event[], ...result: [] | [Result]) {
              const decision = decide();
              expect(decision.events).toEqual(expected);
              if (result.length > 0) expect(decision.result).toEqual(result[0]);
            },
            /** No events; and this result, when one is given. */
            thenNothing(...result: [] | [Result]) {
              const decision = decide();
              expect(decision.events).toEqual([]);
              if (result.length > 0) expect(decision.result).toEqual(result[0]);
            },
            thenRefused(code: DomainErrorCode) {
              let caught: unknown;
              try {
                decide();
              } catch (error) {
                caught = error;
              }
              expect(caught).toBeInstanceOf(DomainError);
              expect((caught as DomainError).code).toBe(code);
            },
            /** The decision itself, for checks the above do not make. */
            decision: decide,
          };
        },
      };
    },
  };
}
