/**
 * Session commands (open, close, reboot, the QR code on show, a pairing code) asked of a process that does not
 * run the device, with the store as the bus: the asking process appends SessionCommandRequested to
 * `session-requests-<deviceId>`, the owner runs it and appends SessionCommandAnswered, which the asker waits
 * for in the log; a new owner answers what is pending (docs/architecture.md, "Several processes").
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
  | { type: 'pair'; phone: string };

export interface SessionCommandOutcome {
  state: string;
  changed: boolean;
  position?: number;
  qr?: { code: string; expiresAt: string };
  pairing?: { code: string; expiresAt: string };
}

/** Why the owner could not run a command; `engine`: the engine refused it (an EngineError, e.g. `unknown_number`). */
export interface SessionCommandFailure {
  code: string;
  message: string;
  engine?: boolean;
}

export type SessionRequestEvent =
  | {
      type: 'SessionCommandRequested';
      data: { deviceId: string; requestId: string; command: SessionCommand; by: string; at: string };
    }
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
  'SessionCommandAnswered',
]);

/** Requests not answered yet, in order (answered ones are forgotten: the stream keeps them). */
export interface SessionRequestsState {
  pending: ReadonlyArray<{ requestId: string; command: SessionCommand; at: string }>;
}

export type SessionRequestCommand =
  | { type: 'Request'; deviceId: string; requestId: string; command: SessionCommand; by: string; at: string }
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
    this.commands = new CommandHandler({ store, decider: sessionRequestsDecider, cacheSize: 0 });
  }

  /** Asks the device's owner (whoever it is, or will be) and waits for its answer. */
  async ask(deviceId: string, command: SessionCommand): Promise<SessionCommandOutcome> {
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
      }, ANSWER_TIMEOUT_MS);
    });
    // The answer can come before the request's own append resolves (the live feed hands events over first):
    // a refusal then waits here, awaited below, instead of counting as unhandled.
    answered.catch(() => undefined);
    try {
      await this.commands.handle(sessionRequestStream(deviceId), {
        type: 'Request',
        deviceId,
        requestId,
        command,
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
        if (result) waiter.resolve(result);
        else if (error?.engine) waiter.reject(new EngineError(error.code, error.message));
        else
          waiter.reject(
            new DomainError((error?.code ?? 'busy') as DomainErrorCode, error?.message ?? 'the session command failed'),
          );
      } else if (this.owns(event.data.deviceId)) {
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
    await this.record(deviceId, requestId, await this.outcomeOf(deviceId, command, at));
  }

  private async outcomeOf(
    deviceId: string,
    command: SessionCommand,
    at: string,
  ): Promise<{ result?: SessionCommandOutcome; error?: SessionCommandFailure }> {
    // Its asker answered `busy` long ago: run now, a close or a reboot would come as a surprise, and nobody waits for it.
    if (Date.now() - Date.parse(at) > ANSWER_TIMEOUT_MS)
      return { error: { code: 'busy', message: "the request expired before the device's process could run it" } };
    try {
      return { result: await this.run(deviceId, command) };
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      if (error instanceof EngineError) return { error: { code: error.code, message, engine: true } };
      return { error: { code: error instanceof DomainError ? error.code : 'busy', message } };
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
