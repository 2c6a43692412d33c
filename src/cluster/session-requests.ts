/**
 * Session commands (open, close, reboot, the QR code on show, a pairing code) and engine-bound calls (a group
 * change, a number check, a sandbox injection: src/cluster/owner-calls.ts) asked of a process that does not run
 * the device: the store is the bus (docs/architecture.md, "Several processes"). The answering process appends
 * SessionCommandRequested to `session-requests-<deviceId>`; the device's owner sees it in the log, runs it and
 * appends SessionCommandAnswered with the result, which the asking process is waiting for in the log. A
 * device that changes hands meanwhile: its new owner answers what is still unanswered when it takes it.
 *
 * The stream, not the clocks, decides whether a request that changes something (a session command other than
 * `qr`, a `once` call) runs after its asker stopped waiting: at its deadline the asker appends
 * SessionCommandGivenUp, and an owner's SessionCommandTaken is refused for a request given up; a request taken
 * first is not given up, and its asker waits for the answer a while longer (TAKEN_ANSWER_TIMEOUT_MS), then answers
 * `busy` with the reason `outcome_unknown`.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { CommandHandler } from '../commands/command-handler.js';
import type { Decider } from '../commands/decider.js';
import { DomainError, type DomainErrorCode } from '../errors/domain-error.js';
import { EngineError } from '../engines/engine.js';
import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';

export const sessionRequestStream = (deviceId: string) => `session-requests-${deviceId}`;

/**
 * `qr` changes nothing: it asks the owner for the code on show, which only its engine connection has. `pair`
 * asks the owner's connection for a pairing code for `phone`.
 */
export type SessionCommand =
  | { type: 'open' }
  | { type: 'close'; logout: boolean }
  | { type: 'reboot' }
  | { type: 'qr' }
  | { type: 'pair'; phone: string }
  | OwnerCallCommand;

/**
 * An engine-bound call (owner-calls.ts): `name` and its JSON `args`, run by the owner once its read models
 * reached `after` (the asker's position: what the client saw there, the owner sees too). `once`: a call that
 * changes something is taken (SessionCommandTaken) before it runs, so that a second owner (a handover in
 * between) does not run it again.
 */
export interface OwnerCallCommand {
  type: 'call';
  name: string;
  args: unknown[];
  after?: number;
  once?: boolean;
  /**
   * How long its asker waits (set by `ask`), then gives it up: an owner whose clock says it is past that gives it up
   * too rather than run it (a cheap early-out; the stream decides).
   */
  timeoutMs?: number;
}

export interface SessionCommandOutcome {
  state: string;
  changed: boolean;
  position?: number;
  qr?: { code: string; expiresAt: string };
  pairing?: { code: string; expiresAt: string };
  /** `qr` without a code: the device is between processes at its owner (taken over and not loaded, or handed on). */
  moving?: boolean;
  /** What a call answered (JSON). */
  value?: unknown;
}

/** Why the owner could not run a command; `engine`: the engine refused it (an EngineError, e.g. `unknown_number`). */
export interface SessionCommandFailure {
  code: string;
  message: string;
  engine?: boolean;
  /** A DomainError's details, given back to the asker's client as they are. */
  fields?: Array<{ path: string; message: string }>;
  retryAfterSeconds?: number;
  reason?: string;
}

export type SessionRequestEvent =
  | {
      type: 'SessionCommandRequested';
      data: { deviceId: string; requestId: string; command: SessionCommand; by: string; at: string };
    }
  | { type: 'SessionCommandTaken'; data: { deviceId: string; requestId: string; by: string } }
  | { type: 'SessionCommandGivenUp'; data: { deviceId: string; requestId: string; by: string } }
  | {
      type: 'SessionCommandAnswered';
      data: {
        deviceId: string;
        requestId: string;
        by: string;
        result?: SessionCommandOutcome;
        error?: SessionCommandFailure;
      };
    };

export const SESSION_REQUEST_EVENT_TYPES: ReadonlySet<string> = new Set<SessionRequestEvent['type']>([
  'SessionCommandRequested',
  'SessionCommandTaken',
  'SessionCommandGivenUp',
  'SessionCommandAnswered',
]);

/**
 * Requests neither answered nor given up yet, in order (the others are forgotten: the stream keeps them), and who took
 * each.
 */
export interface SessionRequestsState {
  pending: ReadonlyArray<{ requestId: string; command: SessionCommand; at: string; takenBy?: string }>;
}

export type SessionRequestCommand =
  | { type: 'Request'; deviceId: string; requestId: string; command: SessionCommand; by: string; at: string }
  | { type: 'Take'; deviceId: string; requestId: string; by: string }
  | { type: 'GiveUp'; deviceId: string; requestId: string; by: string }
  | {
      type: 'Answer';
      deviceId: string;
      requestId: string;
      by: string;
      result?: SessionCommandOutcome;
      error?: SessionCommandFailure;
    };

export const sessionRequestsDecider: Decider<SessionRequestsState, SessionRequestCommand, SessionRequestEvent> = {
  eventTypes: SESSION_REQUEST_EVENT_TYPES,
  initialState: () => ({ pending: [] }),
  evolve(state, event) {
    if (event.type === 'SessionCommandRequested') {
      const { requestId, command, at } = event.data;
      return { pending: [...state.pending, { requestId, command, at }] };
    }
    if (event.type === 'SessionCommandTaken') {
      const { requestId, by } = event.data;
      return {
        pending: state.pending.map((request) =>
          request.requestId === requestId ? { ...request, takenBy: by } : request,
        ),
      };
    }
    return { pending: state.pending.filter((request) => request.requestId !== event.data.requestId) };
  },
  decide(command, state) {
    if (command.type === 'Request') {
      return [
        {
          type: 'SessionCommandRequested',
          data: {
            deviceId: command.deviceId,
            requestId: command.requestId,
            command: command.command,
            by: command.by,
            at: command.at,
          },
        },
      ];
    }
    if (command.type === 'Take') {
      // Taken once: a request answered, given up, or taken by another owner already, is not run again.
      const request = state.pending.find((pending) => pending.requestId === command.requestId);
      if (!request || request.takenBy !== undefined) return [];
      const { deviceId, requestId, by } = command;
      return [{ type: 'SessionCommandTaken', data: { deviceId, requestId, by } }];
    }
    if (command.type === 'GiveUp') {
      // Given up only while nobody took it: a request taken first may be running, and its answer is waited for.
      const request = state.pending.find((pending) => pending.requestId === command.requestId);
      if (!request || request.takenBy !== undefined) return [];
      const { deviceId, requestId, by } = command;
      return [{ type: 'SessionCommandGivenUp', data: { deviceId, requestId, by } }];
    }
    // Answered once: a second owner that ran it too (a handover in between) records nothing more.
    if (!state.pending.some((request) => request.requestId === command.requestId)) return [];
    const { deviceId, requestId, by, result, error } = command;
    return [
      {
        type: 'SessionCommandAnswered',
        data: { deviceId, requestId, by, ...(result ? { result } : {}), ...(error ? { error } : {}) },
      },
    ];
  },
};

const isRequestEvent = eventGuard<SessionRequestEvent>(SESSION_REQUEST_EVENT_TYPES);
/** How long the asking process waits for the owner's answer before giving the request up and answering `busy`. */
const ANSWER_TIMEOUT_MS = 30_000;
/**
 * How much longer the asking process waits for the answer to a request its owner took before the deadline (it may
 * be running): then `busy` with the reason `outcome_unknown`, as it may or may not have run.
 */
export const TAKEN_ANSWER_TIMEOUT_MS = 15_000;
const LATE = Symbol('late');

/**
 * Errors of `ask` after which the request may still run at its owner (taken, then not answered in time; or its
 * append failed and it could not be given up): what the request holds (a held upload) is the owner's to release.
 */
const unsettled = new WeakSet<object>();

/** Whether a carried request may still run (or be running) at its owner after its asker's error. */
export function outcomeUnknown(error: unknown): boolean {
  return typeof error === 'object' && error !== null && unsettled.has(error);
}
const TAKEN_KEPT = 1_000;
/**
 * Reads and decisions of a take, give-up or answer before a conflict is given up: other processes' requests go in
 * at any revision, so a busy device's stream moves under them often; each try reads only the tail.
 */
const DECISION_ATTEMPTS = 50;
const STREAMS_CACHED = 1_000;

export class SessionRequests {
  private readonly commands: CommandHandler<SessionRequestsState, SessionRequestCommand, SessionRequestEvent>;
  private readonly waiting = new Map<
    string,
    { resolve: (outcome: SessionCommandOutcome) => void; reject: (error: Error) => void }
  >();
  /**
   * Requests run here (the most recent TAKEN_KEPT): one seen live while the device's adoption answers its
   * pending ones, or read as pending just before its answer was recorded, runs once.
   */
  private readonly taken = new Set<string>();

  constructor(
    private readonly store: EventStore,
    private readonly memberId: string,
    private readonly owns: (deviceId: string) => boolean,
    private readonly run: (deviceId: string, command: SessionCommand) => Promise<SessionCommandOutcome>,
    private readonly log: Logger,
    private readonly options: {
      /**
       * What the owner waits for before a request is taken and run (the device's actor loading, its session
       * resuming, the read models reaching the asker's position), `timeLeftMs` at most (the time its asker has
       * left, by the clocks: an estimate). Run then follows at once.
       */
      prepare?: (deviceId: string, command: SessionCommand, timeLeftMs: number) => Promise<void>;
      /** This process's wall clock, compared with the asker's (default the clock's). */
      now?: () => number;
      /** The asker's time and timers (tests move it on: test/support/test-clock.ts). */
      clock?: Clock;
      /** Told when this process is done with a request it was handed, run or not (tests wait for it). */
      done?: (deviceId: string, requestId: string) => void;
    } = {},
  ) {
    // Kept in memory: every call carried adds two or three events to the device's stream, so each append reads only
    // what other processes added since (an empty decision on a cached state reads the tail before it counts).
    this.commands = new CommandHandler({
      store,
      decider: sessionRequestsDecider,
      cacheSize: STREAMS_CACHED,
      maxAttempts: DECISION_ATTEMPTS,
    });
  }

  /**
   * Asks the device's owner (whoever it is, or will be) and waits for its answer, `timeoutMs` at most: then the
   * request is given up (`busy`: it was not run, try again), unless the owner took it already, whose answer is
   * waited for `lateTimeoutMs` more (then `busy`, reason `outcome_unknown`). The outcome's `position` is at least
   * the answer's: everything the owner recorded for it is before.
   */
  async ask(
    deviceId: string,
    command: SessionCommand,
    {
      timeoutMs = ANSWER_TIMEOUT_MS,
      lateTimeoutMs = TAKEN_ANSWER_TIMEOUT_MS,
    }: { timeoutMs?: number; lateTimeoutMs?: number } = {},
  ): Promise<SessionCommandOutcome> {
    const requestId = randomUUID();
    const clock = this.options.clock ?? systemClock;
    const deadline = clock.now() + timeoutMs;
    const answered = new Promise<SessionCommandOutcome>((resolve, reject) => {
      this.waiting.set(requestId, { resolve, reject });
    });
    // The answer can come before the request's own append resolves (the live feed hands events over first):
    // a refusal then waits here, awaited below, instead of counting as unhandled.
    answered.catch(() => undefined);
    try {
      try {
        await this.request({
          type: 'Request',
          deviceId,
          requestId,
          command: command.type === 'call' ? { ...command, timeoutMs } : command,
          by: this.memberId,
          at: new Date(clock.now()).toISOString(),
        });
      } catch (error) {
        // It may be recorded all the same (a write whose answer was lost): given up, unless an owner took it.
        if (!(await this.giveUp(deviceId, requestId)).settled && typeof error === 'object' && error !== null)
          unsettled.add(error);
        throw error;
      }
      const first = await within(clock, answered, deadline - clock.now());
      if (first !== LATE) return first;
      const gaveUp = await this.giveUp(deviceId, requestId);
      if (gaveUp.recorded) throw notRunInTime(deviceId);
      // Taken (or answered or given up by its owner meanwhile, the event on its way here): its answer is waited for.
      const late = await within(clock, answered, lateTimeoutMs);
      if (late !== LATE) return late;
      const unknown = new DomainError(
        'busy',
        `the process running device ${deviceId} took the request but did not answer in time; ` +
          'its outcome is unknown (it may have been carried out): check before trying again',
        { retryAfterSeconds: 5, reason: 'outcome_unknown' },
      );
      unsettled.add(unknown);
      throw unknown;
    } finally {
      this.waiting.delete(requestId);
    }
  }

  /**
   * A request is recorded whatever the stream's revision: it decides nothing (its id is new), so it needs neither
   * the stream's state nor a turn behind this process's other requests for the device, and another process's
   * request, take or answer never makes it conflict (issue 30: under load, askers on several processes lost 5
   * conflicts in a row and answered `409 concurrent_change`). Takes, give-ups and answers still decide on the
   * stream with its revision: whichever of a Take and a GiveUp comes first wins.
   */
  private async request(command: Extract<SessionRequestCommand, { type: 'Request' }>): Promise<void> {
    const events = sessionRequestsDecider.decide(command, sessionRequestsDecider.initialState());
    await this.store.append(
      sessionRequestStream(command.deviceId),
      events.map(({ type, data }) => ({ type, data })),
      { expectedRevision: 'any' },
    );
  }

  /**
   * The asker's deadline: the request is given up unless an owner took it. `recorded`: given up now (it will not
   * run); `settled`: it will not run (given up now or before, answered, or never recorded), else it may.
   */
  private async giveUp(deviceId: string, requestId: string): Promise<{ recorded: boolean; settled: boolean }> {
    try {
      const handled = await this.commands.handle(sessionRequestStream(deviceId), {
        type: 'GiveUp',
        deviceId,
        requestId,
        by: this.memberId,
      });
      const recorded = handled.events.length > 0;
      return { recorded, settled: recorded || !handled.state.pending.some((r) => r.requestId === requestId) };
    } catch (error) {
      this.log.warn({ deviceId, requestId, err: error }, 'could not give up a request for the device');
      return { recorded: false, settled: false };
    }
  }

  /** Events of the log: requests for devices this process runs are run, answers to this process's requests handed back. */
  observe(events: readonly StoredEvent[]): void {
    for (const event of events) {
      if (!isRequestEvent(event)) continue;
      if (event.type === 'SessionCommandAnswered') {
        const waiter = this.waiting.get(event.data.requestId);
        if (!waiter) continue;
        this.waiting.delete(event.data.requestId);
        const { result, error } = event.data;
        if (result) waiter.resolve({ ...result, position: Math.max(result.position ?? 0, event.position) });
        else if (error?.engine) waiter.reject(new EngineError(error.code, error.message));
        else waiter.reject(domainErrorOf(error));
      } else if (event.type === 'SessionCommandGivenUp') {
        // Given up by its owner (past the deadline by its clock), or by this process at its deadline: not run.
        this.waiting.get(event.data.requestId)?.reject(notRunInTime(event.data.deviceId));
      } else if (event.type === 'SessionCommandRequested' && this.owns(event.data.deviceId)) {
        void this.answer(event.data.deviceId, event.data);
      }
    }
  }

  /**
   * A device this process just took: what is still waiting for it is answered, in order, in the background (resolves
   * once it is read): the lease tick that took the device does not wait for the calls to run.
   */
  async adopt(deviceId: string): Promise<void> {
    const { state } = await this.commands.load(sessionRequestStream(deviceId));
    void (async () => {
      for (const request of state.pending) await this.answer(deviceId, request);
    })();
  }

  /** Runs a request (never rejects: what fails is logged, or answered as the owner's refusal). */
  private async answer(
    deviceId: string,
    { requestId, command, at }: { requestId: string; command: SessionCommand; at: string },
  ): Promise<void> {
    if (this.taken.has(requestId)) return;
    this.taken.add(requestId);
    if (this.taken.size > TAKEN_KEPT) this.taken.delete(this.taken.values().next().value!);
    try {
      // The asker's deadline by the asker's clock: an estimate only, to skip (give up) what is surely too late and to
      // cap the waits before the run; whether a call that changes something runs is decided by the stream (Take).
      const waited = command.type === 'call' ? (command.timeoutMs ?? ANSWER_TIMEOUT_MS) : ANSWER_TIMEOUT_MS;
      const deadline = Date.parse(at) + waited;
      const clock = this.options.clock ?? systemClock;
      const now = this.options.now ?? (() => clock.now());
      const late = () => !(now() < deadline); // NaN (an unreadable time): late
      if (!late() && this.options.prepare) await this.options.prepare(deviceId, command, deadline - now());
      if (late()) {
        await this.giveUp(deviceId, requestId);
        return;
      }
      if (changesSomething(command)) {
        if (!(await this.take(deviceId, requestId))) return;
      } else if (!(await this.stillAsked(deviceId, requestId))) return;
      await this.record(deviceId, requestId, await this.outcomeOf(deviceId, command));
    } catch (error) {
      this.log.warn({ deviceId, requestId, err: error }, 'a request for the device could not be answered');
    } finally {
      this.options.done?.(deviceId, requestId);
    }
  }

  /** Whether the request is still waiting for an answer (not given up by its asker meanwhile, nor answered). */
  private async stillAsked(deviceId: string, requestId: string): Promise<boolean> {
    const { state } = await this.commands.load(sessionRequestStream(deviceId));
    return state.pending.some((request) => request.requestId === requestId);
  }

  /**
   * A request that changes something is recorded as taken before it runs: false when it is answered or given up
   * already, or was taken by a former owner, which may have run it and answers it if it still can (else its asker
   * answers `busy`, reason `outcome_unknown`).
   */
  private async take(deviceId: string, requestId: string): Promise<boolean> {
    try {
      const taken = await this.commands.handle(sessionRequestStream(deviceId), {
        type: 'Take',
        deviceId,
        requestId,
        by: this.memberId,
      });
      return taken.events.length > 0;
    } catch (error) {
      this.log.warn({ deviceId, requestId, err: error }, 'could not take a request for the device');
      return false;
    }
  }

  private async outcomeOf(
    deviceId: string,
    command: SessionCommand,
  ): Promise<{ result?: SessionCommandOutcome; error?: SessionCommandFailure }> {
    try {
      return { result: await this.run(deviceId, command) };
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      if (error instanceof EngineError) return { error: { code: error.code, message, engine: true } };
      if (!(error instanceof DomainError)) {
        this.log.warn({ deviceId, err: error }, 'a request for the device failed at its owner');
        return { error: { code: 'busy', message } };
      }
      const { code, fields, retryAfterSeconds, reason } = error;
      return {
        error: {
          code,
          message,
          ...(fields ? { fields } : {}),
          ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
          ...(reason === undefined ? {} : { reason }),
        },
      };
    }
  }

  private async record(
    deviceId: string,
    requestId: string,
    outcome: { result?: SessionCommandOutcome; error?: SessionCommandFailure },
  ): Promise<void> {
    try {
      await this.commands.handle(sessionRequestStream(deviceId), {
        type: 'Answer',
        deviceId,
        requestId,
        by: this.memberId,
        ...outcome,
      });
    } catch (error) {
      this.log.warn({ deviceId, requestId, err: error }, 'could not record the answer to a session command');
    }
  }
}

/** The owner's refusal as the asker throws it: the same code, words and details. */
function domainErrorOf(error: SessionCommandFailure | undefined): DomainError {
  return new DomainError((error?.code ?? 'busy') as DomainErrorCode, error?.message ?? 'the session command failed', {
    ...(error?.fields ? { fields: error.fields } : {}),
    ...(error?.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    ...(error?.reason === undefined ? {} : { reason: error.reason }),
  });
}

/**
 * Requests taken before they run (once, decided by the stream against their asker giving them up): all but the code
 * on show and the calls that are harmless to run again.
 */
function changesSomething(command: SessionCommand): boolean {
  return command.type === 'call' ? command.once === true : command.type !== 'qr';
}

/** The asker's `busy` for a request given up before anybody ran it. */
function notRunInTime(deviceId: string): DomainError {
  return new DomainError(
    'busy',
    `the process running device ${deviceId} did not answer in time; the request was given up, not carried out: try again`,
    { retryAfterSeconds: 5 },
  );
}

/** The promise's value, or LATE after `ms` (its rejection is thrown). */
async function within<T>(clock: Clock, promise: Promise<T>, ms: number): Promise<T | typeof LATE> {
  let timer: ClockTimer | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<typeof LATE>((resolve) => (timer = clock.setTimeout(() => resolve(LATE), Math.max(0, ms)))),
    ]);
  } finally {
    clock.clear(timer);
  }
}
