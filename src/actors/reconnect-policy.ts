/**
 * What a device does when its connection ends, by the engine's DisconnectKind. Pure: the device machine
 * asks it for a decision and for the next delay, and tests check it without clocks or sockets.
 */
import type { ReconnectSettings } from '../config.js';
import type { DisconnectKind } from '../engines/engine.js';
import type { SessionError } from '../sessions/session-events.js';

/** The settings come from the environment (config.ts, README): SESSION_RECONNECT_*. */
export type { ReconnectSettings };

export type ReconnectDecision =
  /** Connect again right away (the network asked for a restart); `attempt` counts toward the cap. */
  | { action: 'reconnect_now'; attempt: number }
  /** Wait (see backoffDelayMs) and try again; this is try number `attempt`. */
  | { action: 'retry'; attempt: number }
  /** The account unlinked this device: wipe the credentials, do not retry. */
  | { action: 'logged_out' }
  /** Give up. */
  | { action: 'failed'; error: SessionError };

/**
 * @param attemptsSoFar reconnection tries since the session was last online.
 * @param detail the engine's words for why, kept in the error message.
 */
export function decideAfterDisconnect(kind: DisconnectKind, attemptsSoFar: number, detail: string, settings: ReconnectSettings): ReconnectDecision {
  switch (kind) {
    case 'logged_out':
      return { action: 'logged_out' };
    case 'connection_replaced':
      return { action: 'failed', error: { code: 'connection_replaced', message: detail || 'another session took over this account' } };
    case 'restart_required':
    case 'transient': {
      const attempt = attemptsSoFar + 1;
      if (attempt > settings.maxAttempts) {
        return {
          action: 'failed',
          error: { code: 'too_many_attempts', message: `gave up after ${attemptsSoFar} reconnection attempts; last: ${detail || kind}` },
        };
      }
      // A restart is the network's normal handshake step (e.g. right after pairing): no reason to wait.
      return kind === 'restart_required' ? { action: 'reconnect_now', attempt } : { action: 'retry', attempt };
    }
  }
}

/**
 * Exponential backoff with jitter: base · 2^(attempt-1), capped at maxDelayMs, then spread by ±jitter
 * (and capped again). `random` returns [0, 1) like Math.random.
 */
export function backoffDelayMs(attempt: number, settings: ReconnectSettings, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1);
  // 2^exponent overflows to Infinity for absurd attempt numbers; min() keeps that harmless.
  const nominal = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** exponent);
  const spread = nominal * settings.jitter;
  const jittered = nominal - spread + 2 * spread * random();
  return Math.max(0, Math.round(Math.min(settings.maxDelayMs, jittered)));
}
