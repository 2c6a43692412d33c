/**
 * The decider of a device's session stream (`session-<deviceId>`): `decide` runs the device machine with
 * xstate's pure `transition`, `evolve` applies the session rule (session-record.ts). The state is what the
 * stream says plus the machine's live context, which no event records and a process starts afresh (`resume`).
 * A decision is its events (none, or one SessionStateChanged), the machine state after it, and instructions
 * the device actor carries out once the events are appended (docs/architecture.md, invariant 2).
 */
import { type SnapshotFrom, transition } from 'xstate';
import type { DeviceMachine, DeviceMachineEvent } from './device-machine.js';
import { stateOf } from './device-machine.js';
import { SESSION_EVENT_TYPES, type SessionEvent, type SessionStateChangedData } from './session-events.js';
import { INITIAL_SESSION_RECORD, type SessionRecord, applySessionChange } from './session-record.js';

export type SessionMachineState = SnapshotFrom<DeviceMachine>;

/** A command or an engine callback, as the machine takes it. */
export type SessionCommand = DeviceMachineEvent;

/** An instruction of the machine for the actor (see device-machine.ts); `record` is the decision's event. */
export interface SessionInstruction {
  type: string;
  params?: unknown;
}

export interface SessionDecision {
  /** `[]` when the decision changes nothing the stream records. */
  events: SessionEvent[];
  /** The machine state after the decision, to be taken once its events are appended. */
  state: SessionMachineState;
  instructions: readonly SessionInstruction[];
}

/** What a decision needs besides the command: whose session it is, and "now" (a retry's time is recorded). */
export interface SessionDecisionContext {
  deviceId: string;
  now: number;
}

export interface SessionDecider {
  readonly eventTypes: ReadonlySet<string>;
  initialState(): SessionRecord;
  /** Pure: the session rule applied to one recorded transition. */
  evolve(record: SessionRecord, event: SessionEvent): SessionRecord;
  /** Pure: the machine's transition, and the event that records it when the machine says so. */
  decide(command: SessionCommand, state: SessionMachineState, context: SessionDecisionContext): SessionDecision;
  /** The machine state a loaded record stands for; the live-only context starts empty. */
  resume(record: SessionRecord): SessionMachineState;
}

export function createSessionDecider(machine: DeviceMachine): SessionDecider {
  return {
    eventTypes: SESSION_EVENT_TYPES,

    initialState: () => INITIAL_SESSION_RECORD,

    evolve: (record, event) => applySessionChange(record, event.data),

    decide(command, before, { deviceId, now }) {
      const [after, actions] = transition(machine, before, command);
      const recordAction = actions.find((action) => action.type === 'record');
      const events: SessionEvent[] = recordAction
        ? [
            {
              type: 'SessionStateChanged',
              data: describeChange(
                deviceId,
                before,
                after,
                (recordAction.params as { reason: string }).reason,
                now,
                retryDelayOf(actions),
              ),
            },
          ]
        : [];
      return { events, state: after, instructions: actions };
    },

    resume(record) {
      const { phone, lastError } = record;
      return machine.resolveState({
        value: record.state,
        context: {
          attempts: 0,
          ...(phone === undefined ? {} : { phone }),
          ...(lastError === undefined ? {} : { lastError }),
        },
      });
    },
  };
}

function describeChange(
  deviceId: string,
  before: SessionMachineState,
  after: SessionMachineState,
  reason: string,
  now: number,
  retryDelayMs?: number,
): SessionStateChangedData {
  const state = stateOf(after);
  const { phone, lastError, attempts } = after.context;
  const reconnecting = state === 'reconnecting';
  return {
    deviceId,
    state,
    previousState: stateOf(before),
    ...(phone === undefined ? {} : { phone }),
    reason,
    ...((state === 'failed' || reconnecting) && lastError ? { error: lastError } : {}),
    ...(reconnecting && attempts > 0 ? { attempt: attempts } : {}),
    // "now" plus the delay the machine decided.
    ...(reconnecting && retryDelayMs !== undefined ? { nextRetryAt: new Date(now + retryDelayMs).toISOString() } : {}),
  };
}

/** The delay of the retry a decision schedules, if it schedules one. */
function retryDelayOf(actions: ReadonlyArray<{ type: string; params?: unknown }>): number | undefined {
  const retry = actions.find((action) => action.type === 'scheduleRetry');
  return retry ? Number((retry.params as { delayMs?: number } | undefined)?.delayMs ?? 0) : undefined;
}
