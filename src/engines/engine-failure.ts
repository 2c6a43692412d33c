/**
 * The engine's failures in the words of the API, said once for every service that calls a live connection
 * (groups, account, contact lookups): `not_connected` is the session's state, codes a service names map to
 * its domain codes, anything else the network refused is `engine_error`.
 */
import { type DomainErrorCode, DomainError, sessionNotOnline } from '../errors/domain-error.js';
import { EngineError } from './engine.js';

/** Engine codes a service gives a domain meaning of its own (e.g. `group_not_found` → `not_found`). */
export type EngineRefusals = Readonly<Partial<Record<string, DomainErrorCode>>>;

export function domainErrorOfEngine(error: unknown, sessionState: string | undefined, refusals: EngineRefusals = {}) {
  if (error instanceof DomainError && error.code === 'session_not_online') return sessionNotOnline(sessionState);
  if (!(error instanceof EngineError)) return error;
  if (error.code === 'not_connected') return sessionNotOnline(sessionState);
  const code = refusals[error.code];
  if (code) return new DomainError(code, error.message);
  return new DomainError('engine_error', `the network refused: ${error.message}`);
}

/**
 * The same operations, each call's rejection translated: what a service hands its commands, so that no
 * caller (route or MCP tool) translates again.
 */
export function translatingEngineFailures<T extends object>(
  operations: T,
  sessionState: () => string | undefined,
  refusals: EngineRefusals = {},
): T {
  return new Proxy(operations, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        try {
          const result: unknown = Reflect.apply(value, target, args);
          return result instanceof Promise
            ? result.catch((error: unknown) => {
                throw domainErrorOfEngine(error, sessionState(), refusals);
              })
            : result;
        } catch (error) {
          throw domainErrorOfEngine(error, sessionState(), refusals);
        }
      };
    },
  });
}

/**
 * An optional operation of the device's engine (groups' pictures, chat management, presence subscriptions), or
 * `engine_error` saying the engine has none: the one wording of "this engine cannot do that".
 */
export function engineSupports<F>(operation: F | undefined, what: string): F {
  if (!operation) throw new DomainError('engine_error', `this device's engine has no ${what}`);
  return operation;
}
