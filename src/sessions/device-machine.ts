/**
 * The session lifecycle of one device as an XState v5 machine (the states of docs/api-guide.md, "Sessions and
 * the sandbox engine"). It is only ever evaluated with xstate's pure `transition`: it decides, it never acts.
 * Its named actions are instructions for the DeviceActor, which appends the `record` one as a
 * SessionStateChanged event first and only then carries out the others (docs/architecture.md, invariant 2).
 * While the device's report spool is blocked, the actor holds back `connect`; STORE.AVAILABLE asks for it again.
 */
import { and, setup } from 'xstate';
import type { DisconnectKind, LinkedAccount } from '../engines/engine.js';
import type { SessionError, SessionStateName } from './session-events.js';
import { lastErrorAfter, phoneAfter } from './session-record.js';
import {
  type ReconnectDecision,
  type ReconnectSettings,
  backoffDelayMs,
  classifyConnectionError,
  decideAfterDisconnect,
} from './reconnect-policy.js';

export interface DeviceContext {
  phone?: string;
  /** Why the session failed, or (while reconnecting) why the last try failed. */
  lastError?: SessionError;
  /** Reconnection tries since the session was last online. Not persisted: a restart starts afresh. */
  attempts: number;
  /** Live only: the linked account while online. */
  account?: LinkedAccount;
  /** Live only: the code on show while in `qr`. */
  qr?: { code: string; expiresAt: string };
  /** Live only: the code to type on the phone while in `pairing`. */
  pairing?: { code: string; expiresAt: string };
}

export type DeviceMachineEvent =
  /** Commands. */
  | { type: 'OPEN' }
  | { type: 'CLOSE'; logout: boolean; reason?: string }
  | { type: 'REBOOT' }
  /** The recorded state says running but this process holds no connection (process start, ownership moved). */
  | { type: 'RESUME' }
  /** The reconnect timer fired. */
  | { type: 'RETRY' }
  /** Engine callbacks of the current connection. */
  | { type: 'ENGINE.QR'; code: string; expiresAt: string }
  /** A pairing code to type on the phone (asked for with POST /session/pair), issued or renewed. */
  | { type: 'ENGINE.PAIRING_CODE'; code: string; expiresAt: string }
  | { type: 'ENGINE.ONLINE'; account: LinkedAccount }
  | { type: 'ENGINE.DISCONNECTED'; kind: DisconnectKind; detail: string }
  /** The engine could not even start a connection, for a reason retrying will not fix. */
  | { type: 'ENGINE.FAILED'; error: SessionError }
  /**
   * The store cannot take the device's reports (its spool is blocked): stop the intake, so that the network
   * keeps further messages and sends them again after the reconnect (src/actors/event-spool.ts).
   */
  | { type: 'STORE.UNAVAILABLE' }
  /** The spool has drained: connect again. */
  | { type: 'STORE.AVAILABLE' };

type Args = { context: DeviceContext; event: DeviceMachineEvent };

/** The machine is pure, but the reconnect delay has jitter: the randomness is injected (tests fix it). */
export function createDeviceMachine(settings: ReconnectSettings, random: () => number = Math.random) {
  const decide = ({ context, event }: Args): ReconnectDecision | undefined =>
    event.type === 'ENGINE.DISCONNECTED'
      ? decideAfterDisconnect(event.kind, context.attempts, event.detail, settings)
      : undefined;

  const base = setup({
    types: {} as { context: DeviceContext; events: DeviceMachineEvent },
    actions: {
      // Instructions for the actor, never executed here (see the file comment).
      // This transition is a SessionStateChanged event: every change of state is one, and so is every failed
      // try while reconnecting, so that the history shows the retries.
      record: (_, _params: { reason: string }) => undefined,
      // End any current connection, then start a new one (stored credentials or QR).
      connect: () => undefined,
      // End the connection, keep the credentials.
      disconnect: () => undefined,
      // Unlink the device from the account, then wipe the credentials.
      logout: () => undefined,
      // Wipe the credentials (the account already unlinked us).
      forget: () => undefined,
      // The reconnect timer.
      scheduleRetry: (_, _params: { delayMs: number }) => undefined,
      cancelRetry: () => undefined,
    },
    guards: {
      /** The disconnect policy's decision for this ENGINE.DISCONNECTED is `action`. */
      decided: (args, params: { action: ReconnectDecision['action'] }) => decide(args)?.action === params.action,
      logout: ({ event }) => event.type === 'CLOSE' && event.logout,
      /** The connection asks to be made again: what follows a scanned QR or an entered pairing code. */
      restartRequired: ({ event }) => event.type === 'ENGINE.DISCONNECTED' && event.kind === 'restart_required',
      linked: ({ context }) => context.phone !== undefined,
    },
  });
  const { assign } = base;

  // Context updates (pure, applied by `transition`).
  const resetAttempts = assign({ attempts: 0, lastError: undefined });
  // phone and lastError follow the session rule of src/sessions/session-record.ts.
  const unlink = assign({
    phone: ({ context }) => phoneAfter('logged_out', undefined, context.phone),
    lastError: ({ context }) => lastErrorAfter('logged_out', undefined, context.lastError),
    account: undefined,
    qr: undefined,
  });
  const keepPairing = assign({
    pairing: ({ event, context }) =>
      event.type === 'ENGINE.PAIRING_CODE' ? { code: event.code, expiresAt: event.expiresAt } : context.pairing,
  });
  const keepQr = assign({
    qr: ({ event, context }) =>
      event.type === 'ENGINE.QR' ? { code: event.code, expiresAt: event.expiresAt } : context.qr,
  });
  const linkAccount = assign(({ event, context }) =>
    event.type === 'ENGINE.ONLINE'
      ? {
          account: event.account,
          phone: phoneAfter('online', event.account.phone, context.phone),
          attempts: 0,
          lastError: lastErrorAfter('online', undefined, context.lastError),
        }
      : context,
  );
  // A counted try also says why it failed (classified, e.g. dns_failure), for GET /session/state.
  const countAttempt = assign((args) => {
    const decision = decide(args);
    if (decision?.action !== 'retry' && decision?.action !== 'reconnect_now') return args.context;
    const detail = args.event.type === 'ENGINE.DISCONNECTED' ? args.event.detail : '';
    return { ...args.context, attempts: decision.attempt, lastError: classifyConnectionError(detail) };
  });
  const keepError = assign({
    lastError: (args) => {
      if (args.event.type === 'ENGINE.FAILED') return args.event.error;
      const decision = decide(args);
      return decision?.action === 'failed' ? decision.error : args.context.lastError;
    },
  });

  // Instructions.
  const record = (reason: string) => ({ type: 'record' as const, params: { reason } });
  const recordClose = {
    type: 'record' as const,
    params: ({ event }: Args) => ({
      reason:
        event.type === 'CLOSE' ? (event.reason ?? (event.logout ? 'logged_out_by_user' : 'closed_by_user')) : 'closed',
    }),
  };
  const recordFailure = {
    type: 'record' as const,
    params: ({ context }: Args) => ({ reason: context.lastError?.code ?? 'failed' }),
  };
  const scheduleRetry = {
    type: 'scheduleRetry' as const,
    params: ({ context }: Args) => ({ delayMs: backoffDelayMs(context.attempts, settings, random) }),
  };
  const decided = (action: ReconnectDecision['action']) => ({ type: 'decided' as const, params: { action } });

  /** What every running state (connecting, qr, online, reconnecting) does, unless it says otherwise. */
  const whileRunning = {
    OPEN: {}, // already running: nothing changes
    CLOSE: [
      { guard: 'logout' as const, target: '#device.logged_out', actions: [unlink, recordClose, 'logout' as const] },
      { target: '#device.closed', actions: [recordClose, 'disconnect' as const] },
    ],
    REBOOT: {
      target: '#device.connecting',
      reenter: true,
      actions: [resetAttempts, record('rebooted'), 'connect' as const],
    },
    RESUME: {
      target: '#device.connecting',
      reenter: true,
      actions: [resetAttempts, record('restored'), 'connect' as const],
    },
    'ENGINE.QR': { target: '#device.qr', actions: [keepQr, record('qr_issued')] },
    'ENGINE.PAIRING_CODE': { target: '#device.pairing', actions: [keepPairing, record('pairing_code_issued')] },
    'ENGINE.ONLINE': { target: '#device.online', actions: [linkAccount, record('connected')] },
    'ENGINE.FAILED': { target: '#device.failed', actions: [keepError, recordFailure, 'disconnect' as const] },
    'STORE.UNAVAILABLE': {
      target: '#device.reconnecting',
      actions: [record('store_unavailable'), 'disconnect' as const],
    },
    'STORE.AVAILABLE': {},
  };
  const lost = {
    loggedOut: {
      guard: decided('logged_out'),
      target: '#device.logged_out',
      actions: [unlink, record('logged_out'), 'forget' as const],
    },
    failed: {
      guard: decided('failed'),
      target: '#device.failed',
      actions: [keepError, recordFailure, 'disconnect' as const],
    },
  };
  /**
   * Baileys and the sandbox restart the connection right after a QR was scanned or a pairing code entered: the
   * account is linked, which is progress, not one more failed try (tries that failed before the scan made it
   * `failed` for too many attempts).
   */
  const linked = {
    guard: 'restartRequired' as const,
    target: '#device.connecting',
    actions: [resetAttempts, record('restart_required'), 'connect' as const],
  };

  /** From a stopped state (closed, logged_out, failed), open and reboot make a fresh attempt. */
  const start = (reason: string) => ({
    target: '#device.connecting',
    actions: [resetAttempts, record(reason), 'connect' as const],
  });

  return base.createMachine({
    id: 'device',
    initial: 'closed',
    context: { attempts: 0 },
    states: {
      closed: {
        on: {
          OPEN: start('opened'),
          REBOOT: start('rebooted'),
          CLOSE: [
            // Unlinking a closed session that has an account: wipe its credentials, record logged_out.
            { guard: and(['logout', 'linked']), target: 'logged_out', actions: [unlink, recordClose, 'forget'] },
            // Nothing was linked: wipe whatever a half-done pairing may have left; no change of state.
            { guard: 'logout', actions: ['forget'] },
          ],
        },
      },
      connecting: {
        on: {
          ...whileRunning,
          // Connecting while the intake was held (e.g. a reboot): the connect it asked for was held back.
          'STORE.AVAILABLE': { actions: 'connect' },
          'ENGINE.DISCONNECTED': [
            lost.loggedOut,
            lost.failed,
            // Still connecting: a restart is one more try, not a new state.
            { guard: decided('reconnect_now'), actions: [countAttempt, 'connect'] },
            // It never connected: not a lost connection.
            { target: 'reconnecting', actions: [countAttempt, record('connect_failed'), scheduleRetry] },
          ],
        },
      },
      qr: {
        exit: assign({ qr: undefined }),
        on: {
          ...whileRunning,
          // A renewed code: no change of state.
          'ENGINE.QR': { actions: keepQr },
          'ENGINE.DISCONNECTED': [
            linked,
            lost.loggedOut,
            lost.failed,
            { target: 'reconnecting', actions: [countAttempt, record('connection_lost'), scheduleRetry] },
          ],
        },
      },
      pairing: {
        exit: assign({ pairing: undefined }),
        on: {
          ...whileRunning,
          // Linking by code: QR codes the connection still issues are not shown.
          'ENGINE.QR': {},
          // A renewed code: no change of state.
          'ENGINE.PAIRING_CODE': { actions: keepPairing },
          'ENGINE.DISCONNECTED': [
            linked,
            lost.loggedOut,
            lost.failed,
            { target: 'reconnecting', actions: [countAttempt, record('connection_lost'), scheduleRetry] },
          ],
        },
      },
      online: {
        exit: assign({ account: undefined }),
        on: {
          ...whileRunning,
          'ENGINE.QR': {},
          'ENGINE.PAIRING_CODE': {},
          'ENGINE.ONLINE': { actions: linkAccount },
          'ENGINE.DISCONNECTED': [
            lost.loggedOut,
            lost.failed,
            {
              guard: decided('reconnect_now'),
              target: 'connecting',
              actions: [countAttempt, record('restart_required'), 'connect'],
            },
            { target: 'reconnecting', actions: [countAttempt, record('connection_lost'), scheduleRetry] },
          ],
        },
      },
      reconnecting: {
        exit: 'cancelRetry',
        on: {
          ...whileRunning,
          RETRY: { actions: 'connect' },
          // Already reconnecting: no new state, but no try either until the store takes writes again.
          'STORE.UNAVAILABLE': { actions: ['cancelRetry', 'disconnect'] },
          'STORE.AVAILABLE': { actions: 'connect' },
          // Still reconnecting: the failed try is recorded (same state) with its error and the next one.
          'ENGINE.DISCONNECTED': [
            lost.loggedOut,
            lost.failed,
            { guard: decided('reconnect_now'), actions: [countAttempt, 'connect'] },
            { actions: [countAttempt, record('attempt_failed'), scheduleRetry] },
          ],
        },
      },
      logged_out: {
        on: { OPEN: start('opened'), REBOOT: start('rebooted') },
      },
      failed: {
        on: {
          OPEN: start('opened'),
          REBOOT: start('rebooted'),
          CLOSE: [
            { guard: 'logout', target: 'logged_out', actions: [unlink, recordClose, 'forget'] },
            { target: 'closed', actions: [recordClose] },
          ],
        },
      },
    },
  });
}

export type DeviceMachine = ReturnType<typeof createDeviceMachine>;

export const stateOf = (snapshot: { value: unknown }): SessionStateName => snapshot.value as SessionStateName;
