/**
 * Events of a device's session stream (`session-<deviceId>`). Every transition of the device actor is
 * one SessionStateChanged, appended before the side effect it decides (docs/architecture.md, invariant 2). Its data is the
 * `session.state` webhook payload as it is.
 */
export const sessionStream = (deviceId: string) => `session-${deviceId}`;

export const SESSION_STATES = [
  'closed',
  'connecting',
  'qr',
  'pairing',
  'online',
  'reconnecting',
  'logged_out',
  'failed',
] as const;
export type SessionStateName = (typeof SESSION_STATES)[number];

export interface SessionError {
  /** Stable, e.g. connection_replaced, too_many_attempts, engine_error. */
  code: string;
  message: string;
}

export interface SessionStateChangedData {
  deviceId: string;
  state: SessionStateName;
  previousState: SessionStateName;
  /** Digits of the linked account, once one is linked. */
  phone?: string;
  /** Why it changed, in a word or two: e.g. opened, scanned, connection_lost, logged_out, closed_by_user. */
  reason?: string;
  /** Set when the new state is `failed` or `reconnecting` (a failed try, a dropped connection; kept as `lastError` until online). */
  error?: SessionError;
  /** While `reconnecting`: the number of the try that failed (1 = the first). */
  attempt?: number;
  /** While `reconnecting`: when the next try starts (absent while the store cannot take writes). */
  nextRetryAt?: string;
}

export type SessionEvent = { type: 'SessionStateChanged'; data: SessionStateChangedData };

export const SESSION_EVENT_TYPES: ReadonlySet<string> = new Set(['SessionStateChanged']);
