/**
 * The session stream's writer: one per device, held by its actor, which hands it commands and engine
 * callbacks one at a time (invariant 3). It decides with the session decider, appends with the revision last
 * seen, and only once the append is in takes the decided state and hands back the instructions (invariant 2).
 * Its state comes from a snapshot plus the events after it, never from replaying the machine (invariant 6),
 * so loading it has no side effect.
 */
import type { Logger } from 'pino';
import type { EventStore } from '../eventstore/event-store.js';
import type { DeviceContext } from './device-machine.js';
import { stateOf } from './device-machine.js';
import type { SessionCommand, SessionDecider, SessionInstruction, SessionMachineState } from './session-decider.js';
import { type SessionStateChangedData, type SessionStateName, sessionStream } from './session-events.js';
import { INITIAL_SESSION_RECORD, type SessionRecord, loadSession } from './session-record.js';

/** A recorded transition, as observers see it. */
export interface SessionTransition extends SessionStateChangedData {
  /** Global position of the appended event (wait for projections to reach it to read your write). */
  position: number;
  revision: number;
}

export interface CommandResult {
  state: SessionStateName;
  /** False when the command changed nothing (e.g. open while already running). */
  changed: boolean;
  /** Position of the event the command appended, if it appended one. */
  position?: number;
}

export interface SessionCommandsOptions {
  deviceId: string;
  store: EventStore;
  decider: SessionDecider;
  log: Logger;
  /** A snapshot is saved after this many new events. */
  snapshotEvery?: number;
}

const DEFAULT_SNAPSHOT_EVERY = 25;

export class SessionCommands {
  private readonly stream: string;
  /** The machine's state; undefined until the session is loaded. */
  private machineState: SessionMachineState | undefined;
  private record: SessionRecord = INITIAL_SESSION_RECORD;
  private revision = -1;
  private snapshotRevision = -1;
  /** Global position of the last transition this writer recorded (0: none yet). */
  private lastPosition = 0;

  constructor(private readonly options: SessionCommandsOptions) {
    this.stream = sessionStream(options.deviceId);
  }

  get loaded(): boolean {
    return this.machineState !== undefined;
  }

  /** The state as this writer knows it; undefined before the session is loaded. */
  state(): SessionStateName | undefined {
    return this.machineState && stateOf(this.machineState);
  }

  /** The machine's context (live parts included); undefined before the session is loaded. */
  context(): DeviceContext | undefined {
    return this.machineState?.context;
  }

  /** The durable part of the session (what its stream says). */
  sessionRecord(): SessionRecord {
    return this.record;
  }

  /** Global position of the last transition recorded here (0: none yet). */
  position(): number {
    return this.lastPosition;
  }

  /** State from the snapshot plus later events; the machine's live-only context (attempts, QR, account) starts empty. */
  async load(): Promise<SessionStateName> {
    const loaded = await loadSession(this.options.store, this.options.deviceId);
    this.record = loaded.record;
    this.revision = loaded.revision;
    this.snapshotRevision = loaded.snapshotRevision;
    this.machineState = this.options.decider.resume(loaded.record);
    return stateOf(this.machineState);
  }

  /** Forgets the machine's state: the session counts as not loaded until `load` runs again. */
  unload(): void {
    this.machineState = undefined;
  }

  /**
   * Decides the command on the loaded state and appends what it decided, then takes the decided state.
   * A refused append (WrongExpectedRevisionError: another writer) leaves the state as it was and is thrown.
   */
  async handle(
    command: SessionCommand,
  ): Promise<{ state: SessionStateName; recorded?: SessionTransition; instructions: readonly SessionInstruction[] }> {
    const decision = this.options.decider.decide(command, this.machineState!, {
      deviceId: this.options.deviceId,
      now: Date.now(),
    });
    const change = decision.events[0]?.data;
    const recorded = change && (await this.append(change));
    this.machineState = decision.state;
    return { state: stateOf(decision.state), ...(recorded ? { recorded } : {}), instructions: decision.instructions };
  }

  /**
   * Decides the command and takes the decided state at once, before anything is recorded: the change to
   * record (with `append`, as soon as the store takes it) is handed back. Only for the intake hold, whose act
   * comes before its record (src/actors/device-actor.ts, holdIntake).
   */
  decideUnrecorded(command: SessionCommand): {
    change?: SessionStateChangedData;
    instructions: readonly SessionInstruction[];
  } {
    const decision = this.options.decider.decide(command, this.machineState!, {
      deviceId: this.options.deviceId,
      now: Date.now(),
    });
    this.machineState = decision.state;
    const change = decision.events[0]?.data;
    return { ...(change ? { change } : {}), instructions: decision.instructions };
  }

  /** Appends a decided change with the revision last seen; a snapshot follows every `snapshotEvery` events. */
  async append(change: SessionStateChangedData): Promise<SessionTransition> {
    const result = await this.options.store.append(this.stream, [{ type: 'SessionStateChanged', data: change }], {
      expectedRevision: this.revision,
    });
    this.revision = result.nextExpectedRevision;
    this.lastPosition = result.position;
    this.record = this.options.decider.evolve(this.record, { type: 'SessionStateChanged', data: change });
    if (this.revision - this.snapshotRevision >= (this.options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY))
      await this.saveSnapshot();
    return { ...change, position: result.position, revision: result.nextExpectedRevision };
  }

  private async saveSnapshot(): Promise<void> {
    try {
      await this.options.store.saveSnapshot(this.stream, { revision: this.revision, state: this.record });
      this.snapshotRevision = this.revision;
    } catch (error) {
      // Only costs a longer read next time.
      this.options.log.warn({ deviceId: this.options.deviceId, err: error }, 'could not save the session snapshot');
    }
  }
}
