/**
 * Given / when / then for deciders, without I/O (as event-driven-io/emmett's DeciderSpecification):
 * given the events already in the stream, when a command is decided, then these events (or this error).
 */
import { expect } from 'vitest';
import { type Decider, fold } from '../../src/commands/decider.js';
import { DomainError, type DomainErrorCode } from '../../src/errors/domain-error.js';
import type { TypedEvent } from '../../src/eventstore/typed-events.js';

export function deciderSpecification<State, Command, Event extends TypedEvent>(
  decider: Decider<State, Command, Event>,
) {
  return {
    given(events: readonly Event[]) {
      const state = fold(decider, decider.initialState(), events);
      return {
        when(command: Command) {
          const decide = () => decider.decide(command, state);
          return {
            then(expected: readonly Event[]) {
              expect(decide()).toEqual(expected);
            },
            thenNothing() {
              expect(decide()).toEqual([]);
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
          };
        },
      };
    },
  };
}
