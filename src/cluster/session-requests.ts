/**
 * Session commands (open, close, reboot, the QR code on show, a pairing code) and engine-bound calls (a group
 * change, a number check, a sandbox injection: src/cluster/owner-calls.ts) asked of a process that does not run
 * the device: the store is the bus (docs/architecture.md, "Several processes"). The answering process appends
 * SessionCommandRequested to `session-requests-<deviceId>`; the device's owner sees it in the log, runs it and
 * appends SessionCommandAnswered with the result, which the asking process is waiting for in the log. A
 * device that changes hands meanwhile: its new owner answers what is still unanswered when it takes it.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { CommandHandler } from '../commands/command-handler.js';
import type { Decider } from '../commands/decider.js';
import { DomainError, type DomainErrorCode } from '../errors/domain-error.js';
import { EngineError } from '../engines/engine.js';
import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';

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
  /** How long its asker waits (set by `ask`): an owner that sees it later does not run it. */
  timeoutMs?: number;
}

export interface SessionCommandOutcome {
  state: string;
  changed: boolean;
  position?: number;
  qr?: { code: string; expiresAt: string };
  pairing?: { code: string; expiresAt: string };
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
  'SessionCommandAnswered',
]);

/** Requests not answered yet, in order (answered ones are forgotten: the stream keeps them), and who took each. */
export interface SessionRequestsState {
  pending: ReadonlyArray<{ requestId: string; command: SessionCommand; at: string; takenBy?: string }>;
}

export type SessionRequestCommand =
  | { type: 'Request'; deviceId: string; requestId: string; command: SessionCommand; by: string; at: string }
  | { type: 'Take'; deviceId: string; requestId: string; by: string }
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
      // Taken once: a request answered, or taken by another owner already, is not run again.
      const request = state.pending.find((pending) => pending.requestId === command.requestId);
      if (!request || request.takenBy !== undefined) return [];
      const { deviceId, requestId, by } = command;
      return [{ type: 'SessionCommandTaken', data: { deviceId, requestId, by } }];
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
/** How long the asking process waits for the owner's answer before answering `busy` (try again). */
const ANSWER_TIMEOUT_MS = 30_000;
const TAKEN_KEPT = 1_000;
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
    store: EventStore,
    private readonly memberId: string,
    private readonly owns: (deviceId: string) => boolean,
    private readonly run: (deviceId: string, command: SessionCommand) => Promise<SessionCommandOutcome>,
    private readonly log: Logger,
  ) {
    // Kept in memory: every call carried adds two or three events to the device's stream, so each append reads only
    // what other processes added since (an empty decision on a cached state reads the tail before it counts).
    this.commands = new CommandHandler({ store, decider: sessionRequestsDecider, cacheSize: STREAMS_CACHED });
  }

  /**
   * Asks the device's owner (whoever it is, or will be) and waits for its answer, `timeoutMs` at most (then
   * `busy`). The outcome's `position` is at least the answer's: everything the owner recorded for it is before.
   */
  async ask(
    deviceId: string,
    command: SessionCommand,
    { timeoutMs = ANSWER_TIMEOUT_MS }: { timeoutMs?: number } = {},
  ): Promise<SessionCommandOutcome> {
    const requestId = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<SessionCommandOutcome>((resolve, reject) => {
      this.waiting.set(requestId, { resolve, reject });
      timer = setTimeout(() => {
        this.waiting.delete(requestId);
        reject(
          new DomainError('busy', `the process running device ${deviceId} did not answer in time; try again`, {
            retryAfterSeconds: 5,
          }),
        );
      }, timeoutMs);
    });
    // The answer can come before the request's own append resolves (the live feed hands events over first):
    // a refusal then waits here, awaited below, instead of counting as unhandled.
    answered.catch(() => undefined);
    try {
      await this.commands.handle(sessionRequestStream(deviceId), {
        type: 'Request',
        deviceId,
        requestId,
        command: command.type === 'call' ? { ...command, timeoutMs } : command,
        by: this.memberId,
        at: new Date().toISOString(),
      });
      return await answered;
    } catch (error) {
      this.waiting.delete(requestId);
      throw error;
    } finally {
      clearTimeout(timer);
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
      } else if (event.type === 'SessionCommandRequested' && this.owns(event.data.deviceId)) {
        void this.answer(event.data.deviceId, event.data);
      }
    }
  }

  /** A device this process just took: answer what is still waiting for it. */
  async adopt(deviceId: string): Promise<void> {
    const { state } = await this.commands.load(sessionRequestStream(deviceId));
    for (const request of state.pending) await this.answer(deviceId, request);
  }

  private async answer(
    deviceId: string,
    { requestId, command, at }: { requestId: string; command: SessionCommand; at: string },
  ): Promise<void> {
    if (this.taken.has(requestId)) return;
    this.taken.add(requestId);
    if (this.taken.size > TAKEN_KEPT) this.taken.delete(this.taken.values().next().value!);
    if (command.type === 'call' && command.once && !(await this.take(deviceId, requestId))) return;
    await this.record(deviceId, requestId, await this.outcomeOf(deviceId, command, at));
  }

  /**
   * A call that changes something is recorded as taken before it runs: false when it is answered already, or was
   * taken by a former owner, which may have run it and answers it if it still can (else its asker's deadline does).
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
    at: string,
  ): Promise<{ result?: SessionCommandOutcome; error?: SessionCommandFailure }> {
    // Its asker answered `busy` long ago: run now, a close or a reboot would come as a surprise, and nobody waits for it.
    const waited = command.type === 'call' ? (command.timeoutMs ?? ANSWER_TIMEOUT_MS) : ANSWER_TIMEOUT_MS;
    if (Date.now() - Date.parse(at) > waited)
      return { error: { code: 'busy', message: "the request expired before the device's process could run it" } };
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
