/**
 * What a device does when its connection ends, by the engine's DisconnectKind. Pure: the device machine
 * asks it for a decision and for the next delay, and tests check it without clocks or sockets.
 */
import type { ReconnectSettings } from '../config.js';
import type { DisconnectKind } from '../engines/engine.js';
import type { SessionError } from './session-events.js';

/** The settings come from the environment (config.ts; docs/configuration.md, "Sessions and engines"): SESSION_RECONNECT_*. */
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
export function decideAfterDisconnect(
  kind: DisconnectKind,
  attemptsSoFar: number,
  detail: string,
  settings: ReconnectSettings,
): ReconnectDecision {
  switch (kind) {
    case 'logged_out':
      return { action: 'logged_out' };
    case 'connection_replaced':
      return {
        action: 'failed',
        error: { code: 'connection_replaced', message: detail || 'another session took over this account' },
      };
    case 'account_restricted':
      // Redialling with an account WhatsApp refuses looks like what got it refused: stop, and say so.
      return {
        action: 'failed',
        error: {
          code: 'account_restricted',
          message: `WhatsApp refused this account (${detail || 'restricted'}): it may be banned or locked; check WhatsApp on the phone, then open the session again`,
        },
      };
    case 'restart_required':
    case 'transient': {
      const attempt = attemptsSoFar + 1;
      if (attempt > settings.maxAttempts) {
        return {
          action: 'failed',
          error: {
            code: 'too_many_attempts',
            message: `gave up after ${attemptsSoFar} reconnection attempts; last: ${detail ? `${classifyConnectionError(detail).code}: ${detail}` : kind}`,
          },
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
export function backoffDelayMs(
  attempt: number,
  settings: ReconnectSettings,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attempt - 1);
  // 2^exponent overflows to Infinity for absurd attempt numbers; min() keeps that harmless.
  const nominal = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** exponent);
  const spread = nominal * settings.jitter;
  const jittered = nominal - spread + 2 * spread * random();
  return Math.max(0, Math.round(Math.min(settings.maxDelayMs, jittered)));
}

/**
 * Why a connection attempt failed, in a stable code a user can act on, from the engine's words (its error
 * message or Baileys' `name (status): message`). Pure; the machine keeps it as the session's `lastError`
 * while it is reconnecting.
 */
export function classifyConnectionError(detail: string): SessionError {
  const message = detail || 'the connection ended';
  const code = CONNECTION_ERROR_CODES.find(([pattern]) => pattern.test(message))?.[1] ?? 'connection_lost';
  const words = CONNECTION_ERROR_WORDS[code];
  return { code, message: words ? `${words} (${message})` : message };
}

const CONNECTION_ERROR_CODES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\(405\)|client.?outdated/i, 'client_outdated'],
  [/ENOTFOUND|EAI_AGAIN|getaddrinfo/i, 'dns_failure'],
  [/proxy/i, 'proxy'],
  [/ECONNREFUSED/i, 'connect_refused'],
  [/ECONNRESET|EPIPE|socket hang up/i, 'connection_reset'],
  [/ETIMEDOUT|timed? ?out|\(408\)/i, 'timeout'],
  [/certificate|\bTLS\b|\bSSL\b|EPROTO/i, 'tls'],
  [/ENETUNREACH|EHOSTUNREACH/i, 'network_unreachable'],
];

const CONNECTION_ERROR_WORDS: Readonly<Record<string, string>> = {
  client_outdated:
    'WhatsApp refused this WhatsApp Web version as outdated: set WA_WEB_VERSION (a version or `latest`) or update the gateway',
  dns_failure: 'the WhatsApp server name could not be resolved: check the network and DNS',
  proxy: 'the proxy refused or failed the connection',
  connect_refused: 'the server refused the connection',
  connection_reset: 'the connection was reset',
  timeout: 'the connection timed out',
  tls: 'the TLS handshake failed',
  network_unreachable: 'the network is unreachable',
};
