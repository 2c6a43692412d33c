/**
 * The durable part of a device's session: what the `session-<deviceId>` stream says, folded.
 * It is rebuilt from the latest snapshot plus the events after it (docs/architecture.md, invariant 6) and never by re-running
 * the device machine, so rehydrating a device performs no side effect.
 */
import type { EventStore, StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import {
  SESSION_EVENT_TYPES,
  type SessionError,
  type SessionEvent,
  type SessionStateChangedData,
  type SessionStateName,
  sessionStream,
} from './session-events.js';

export interface SessionRecord {
  state: SessionStateName;
  /** The linked account's number; kept while credentials are (also when closed), gone once logged out. */
  phone?: string;
  /** Why the session last failed (or why the last try failed, while reconnecting); cleared by online, close, logout and open. */
  lastError?: SessionError;
  /** While reconnecting: tries that failed so far, and when the next one starts. */
  attempt?: number;
  nextRetryAt?: string;
}

const isSessionEvent = eventGuard<SessionEvent>(SESSION_EVENT_TYPES);

export const INITIAL_SESSION_RECORD: SessionRecord = { state: 'closed' };

/** States in which the device is meant to be connected: the process that runs it must keep it so. */
export const RUNNING_STATES: ReadonlySet<SessionStateName> = new Set([
  'connecting',
  'qr',
  'pairing',
  'online',
  'reconnecting',
]);

export const isRunning = (state: SessionStateName): boolean => RUNNING_STATES.has(state);

/**
 * The session rule, written once: the linked account's number stays while credentials are kept and goes
 * when logged out; the last error stays until the session is online, closed, logged out or started afresh
 * (connecting), so that a stale error never describes a new attempt, and `logged_out` (which is no failure)
 * carries none. The device machine and the devices read model apply it through these functions.
 */
export const phoneAfter = (
  state: SessionStateName,
  reported: string | undefined,
  before: string | undefined,
): string | undefined => (state === 'logged_out' ? undefined : (reported ?? before));

export const lastErrorAfter = (
  state: SessionStateName,
  reported: SessionError | undefined,
  before: SessionError | undefined,
): SessionError | undefined =>
  state === 'online' || state === 'closed' || state === 'logged_out' || state === 'connecting'
    ? undefined
    : (reported ?? before);

/** The reconnection progress a change reports; only a `reconnecting` session has one. */
export const retryAfter = (
  change: Pick<SessionStateChangedData, 'state' | 'attempt' | 'nextRetryAt'>,
): { attempt?: number; nextRetryAt?: string } =>
  change.state !== 'reconnecting'
    ? {}
    : {
        ...(change.attempt === undefined ? {} : { attempt: change.attempt }),
        ...(change.nextRetryAt === undefined ? {} : { nextRetryAt: change.nextRetryAt }),
      };

/** One transition applied: the session stream's evolve. */
export function applySessionChange(record: SessionRecord, change: SessionStateChangedData): SessionRecord {
  const phone = phoneAfter(change.state, change.phone, record.phone);
  const lastError = lastErrorAfter(change.state, change.error, record.lastError);
  return {
    state: change.state,
    ...(phone === undefined ? {} : { phone }),
    ...(lastError === undefined ? {} : { lastError }),
    ...retryAfter(change),
  };
}

export function foldSessionEvents(record: SessionRecord, events: readonly StoredEvent[]): SessionRecord {
  let folded = record;
  for (const event of events) if (isSessionEvent(event)) folded = applySessionChange(folded, event.data);
  return folded;
}

export interface LoadedSession {
  record: SessionRecord;
  /** Revision of the stream's last event; -1 when the stream is empty. */
  revision: number;
  /** Revision the snapshot it started from covers; -1 without one. */
  snapshotRevision: number;
}

/** Reads the session's snapshot and the events after it (never the whole history) and folds them. */
export async function loadSession(store: EventStore, deviceId: string): Promise<LoadedSession> {
  const stream = sessionStream(deviceId);
  const snapshot = await store.loadSnapshot<SessionRecord>(stream);
  const snapshotRevision = snapshot?.revision ?? -1;
  const after = await store.readStream(stream, { fromRevision: snapshotRevision + 1 });
  return {
    record: foldSessionEvents(snapshot?.state ?? INITIAL_SESSION_RECORD, after),
    revision: after[after.length - 1]?.revision ?? snapshotRevision,
    snapshotRevision,
  };
}
