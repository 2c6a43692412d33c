/**
 * Why a Baileys connection ended, translated into the DisconnectKind the device actor decides on.
 * Baileys closes with a Boom error whose `output.statusCode` is one of its DisconnectReason codes
 * (or a stream/failure code the server sent); no error at all means the socket was ended locally.
 */
import { DisconnectReason } from 'baileys';
import type { DisconnectKind } from '../engine.js';

export interface DisconnectCause {
  kind: DisconnectKind;
  /** The status code Baileys reported, when it reported one. */
  statusCode?: number;
  /** One line for logs and the actor's `reason`: the code's name and Baileys' message. */
  detail: string;
}

/** The status code of a `lastDisconnect.error`, which is a Boom for every close Baileys decides itself. */
export function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { output?: { statusCode?: unknown } }).output?.statusCode;
  return typeof code === 'number' && Number.isInteger(code) ? code : undefined;
}

/**
 * A connection failure WhatsApp sends about the account itself: 403 forbidden (locked or banned), and 402 and
 * 406, which it sends to temporarily and permanently banned accounts (not in Baileys' DisconnectReason).
 */
const ACCOUNT_REFUSED: ReadonlySet<number> = new Set([402, DisconnectReason.forbidden, 406]);

/** 515 → restart_required, 401 → logged_out, 440 → connection_replaced, 402/403/406 → account_restricted, everything else → transient. */
export function disconnectKindOf(statusCode: number | undefined): DisconnectKind {
  if (statusCode !== undefined && ACCOUNT_REFUSED.has(statusCode)) return 'account_restricted';
  switch (statusCode) {
    case DisconnectReason.restartRequired:
      return 'restart_required';
    case DisconnectReason.loggedOut:
      return 'logged_out';
    case DisconnectReason.connectionReplaced:
      return 'connection_replaced';
    default:
      // 408 connectionLost / timedOut (a dead keepalive), 428 connectionClosed, 500 badSession,
      // 503 unavailableService and unknown codes: the actor retries with backoff.
      return 'transient';
  }
}

const CODE_NAMES: ReadonlyMap<number, string> = new Map([
  [DisconnectReason.connectionClosed, 'connection_closed'],
  [DisconnectReason.connectionLost, 'connection_lost'],
  [DisconnectReason.connectionReplaced, 'connection_replaced'],
  [DisconnectReason.loggedOut, 'logged_out'],
  [DisconnectReason.badSession, 'bad_session'],
  [DisconnectReason.restartRequired, 'restart_required'],
  [DisconnectReason.multideviceMismatch, 'multidevice_mismatch'],
  [DisconnectReason.forbidden, 'forbidden'],
  [402, 'temporarily_banned'],
  [406, 'banned'],
  [DisconnectReason.unavailableService, 'unavailable_service'],
]);

export function describeDisconnect(error: unknown): DisconnectCause {
  const statusCode = statusCodeOf(error);
  const name = statusCode === undefined ? 'no_status' : (CODE_NAMES.get(statusCode) ?? `status_${statusCode}`);
  const message = error instanceof Error && error.message ? error.message : 'connection ended';
  return {
    kind: disconnectKindOf(statusCode),
    ...(statusCode === undefined ? {} : { statusCode }),
    detail: statusCode === undefined ? `${name}: ${message}` : `${name} (${statusCode}): ${message}`,
  };
}
