/**
 * Engine-bound calls (a group change, a number check, a read receipt, a sandbox injection: anything that needs
 * the device's live connection) served by the process that runs the device. A lone process runs every call
 * itself. With several processes, a call for a device another process runs is carried to it through the store
 * (session-requests.ts: a `call` with the call's name and JSON arguments) and the owner runs the same function
 * a local call would; its answer, or its refusal (a DomainError's code, words and details), is this
 * process's answer. The owner answers within a deadline, else the call is given up (not run) and is `busy` (try
 * again), or `session_not_online` when the device's recorded state says it is not online anyway; a call its owner
 * took before the deadline is waited for longer, then `busy` with the reason `outcome_unknown` (session-requests.ts).
 */
import { DomainError, sessionNotOnline } from '../errors/domain-error.js';
import { type OwnerCallCommand, outcomeUnknown } from './session-requests.js';

export { outcomeUnknown };

/** How a call reaches the owner of a device this process does not run (the cluster wiring). */
export interface CallCarrier {
  /** Several processes, and this one does not run the device. */
  elsewhere(deviceId: string): boolean;
  /** Asks the owner; resolves with its answer and the log position of everything it recorded for it. */
  carry(deviceId: string, call: OwnerCallCommand, timeoutMs: number): Promise<{ value?: unknown; position?: number }>;
}

export interface OwnerCallsOptions {
  /** This process's read-model position, carried with a call so that the owner answers from read models as new. */
  position: () => number;
  /** Waits until this process's read models reach a position (the owner's writes for a call, read your writes). */
  settle: (position: number) => Promise<unknown>;
  /** The device's recorded session state, for the words of a call the owner did not answer in time. */
  recordedState: (deviceId: string) => string | undefined;
  /** How long a call waits for the owner's answer. */
  timeoutMs?: number;
}

/** `once`: the call changes something (it is not run twice); `repeatable`: running it again is harmless. */
export type CallKind = 'once' | 'repeatable';

type Call = (deviceId: string, ...args: never[]) => Promise<unknown>;

/** The same methods, each served by the device's owner. */
export type OwnerServed<T, K extends keyof T> = Pick<T, K>;

const CALL_TIMEOUT_MS = 20_000;

export class OwnerCalls {
  private readonly calls = new Map<string, { run: Call; kind: CallKind }>();
  private carrier: CallCarrier | undefined;

  constructor(private readonly options: OwnerCallsOptions) {}

  /** Several processes: calls for devices run elsewhere go through `carrier` from now on. */
  carryWith(carrier: CallCarrier): void {
    this.carrier = carrier;
  }

  /**
   * `run` under `name` (unique): answers the function the routes call, which runs `run` here when this process
   * runs the device (or is alone), else on the device's owner. Arguments and answer must be JSON.
   */
  define<A extends unknown[], R>(
    name: string,
    kind: CallKind,
    run: (deviceId: string, ...args: A) => Promise<R>,
  ): (deviceId: string, ...args: A) => Promise<R> {
    if (this.calls.has(name)) throw new Error(`the call ${name} is defined twice`);
    this.calls.set(name, { run: run as unknown as Call, kind });
    return async (deviceId, ...args) => {
      const carrier = this.carrier;
      if (!carrier?.elsewhere(deviceId)) return run(deviceId, ...args);
      return (await this.carried(carrier, deviceId, name, kind, args)) as R;
    };
  }

  /** The `methods` of `service`, each served by the device's owner (its first argument is the device id). */
  serve<T extends object, K extends keyof T & string>(
    prefix: string,
    service: T,
    methods: Readonly<Record<K, CallKind>>,
  ): OwnerServed<T, K> {
    const served = {} as Record<string, unknown>;
    for (const [method, kind] of Object.entries(methods) as Array<[K, CallKind]>) {
      const fn = service[method];
      if (typeof fn !== 'function') throw new Error(`${prefix}.${method} is not a method`);
      served[method] = this.define(`${prefix}.${method}`, kind, (fn as unknown as Call).bind(service));
    }
    return served as OwnerServed<T, K>;
  }

  /**
   * At the owner, before a call another process carried here is taken and run: waits until this process's read
   * models have what the asker's had (`after`), `timeLeftMs` at most (the asker's time left).
   */
  async prepare({ after }: OwnerCallCommand, timeLeftMs: number): Promise<void> {
    if (after) await capped(this.options.settle(after), timeLeftMs);
  }

  /** At the owner: runs a call another process carried here, as a local one runs (after `prepare`). */
  async run(deviceId: string, { name, args }: OwnerCallCommand): Promise<unknown> {
    const call = this.calls.get(name);
    // Another version of the gateway may know calls this one does not (a rolling restart).
    if (!call) throw new DomainError('busy', `this process cannot serve ${name}; try again`, { retryAfterSeconds: 1 });
    return call.run(deviceId, ...(args.map((arg) => (arg === null ? undefined : arg)) as never[]));
  }

  private async carried(
    carrier: CallCarrier,
    deviceId: string,
    name: string,
    kind: CallKind,
    args: unknown[],
  ): Promise<unknown> {
    const call: OwnerCallCommand = {
      type: 'call',
      name,
      // `undefined` is not JSON: a left-out optional argument travels as null and is left out again at the owner
      // (no call takes a null).
      args: args.map((arg) => (arg === undefined ? null : arg)),
      after: this.options.position(),
      ...(kind === 'once' ? { once: true } : {}),
    };
    let answer: { value?: unknown; position?: number };
    try {
      answer = await carrier.carry(deviceId, call, this.options.timeoutMs ?? CALL_TIMEOUT_MS);
    } catch (error) {
      // Not answered in time (and not run): a device recorded as not online would have been refused anyway, in the
      // same words. One its owner took may have run: that is said as it is.
      const state = this.options.recordedState(deviceId);
      if (
        error instanceof DomainError &&
        error.code === 'busy' &&
        !outcomeUnknown(error) &&
        state !== undefined &&
        state !== 'online'
      )
        throw sessionNotOnline(state);
      throw error;
    }
    if (answer.position) await this.options.settle(answer.position);
    return answer.value;
  }
}

/** Resolves when `promise` settles or after `ms`, whichever comes first (its rejection is thrown). */
export async function capped(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (promise === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}
