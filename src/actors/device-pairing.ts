/**
 * Linking an account by a pairing code (POST /devices/:id/session/pair), for one device actor: open the
 * session if needed, wait until the connection shows codes (`qr`), and ask the engine for a code (`pairing`);
 * asking again for the same number answers the code on show. A refused request changes nothing: what can be
 * checked is checked before opening, and a session it opened is closed again. Outside the actor's mailbox,
 * since it waits for engine callbacks that go through it.
 */
import type { Logger } from 'pino';
import type { EngineConnection } from '../engines/engine.js';
import { DomainError } from '../errors/domain-error.js';
import type { SessionStateName } from '../sessions/session-events.js';
import { isRunning } from '../sessions/session-record.js';
import type { CommandResult } from '../sessions/session-commands.js';

export interface PairingCode {
  code: string;
  expiresAt: string;
}

/** What pairing needs of the device's actor. */
export interface PairingSession {
  readonly deviceId: string;
  readonly log: Logger;
  /**
   * In the actor's mailbox: loads the session and answers what a request is checked against (its state, the
   * linked account's number, the code on show) and the number of the connection of the moment.
   */
  inspect(): Promise<{ state: SessionStateName; linkedPhone?: string; pairing?: PairingCode; epoch: number }>;
  open(): Promise<CommandResult>;
  close(options: { logout: boolean; reason: string }): Promise<CommandResult>;
  /** Once everything already in the mailbox is done: the state, and the position of the last transition recorded. */
  settled(): Promise<{ state: SessionStateName | undefined; position: number }>;
  /** The code on show, while the state is `pairing`. */
  pairingCode(): PairingCode | undefined;
  /** The connection of the moment, with its number (callbacks of other numbers are stale). */
  connection(): { epoch: number; connection: EngineConnection | undefined };
}

/** How long POST /session/pair waits for a connection that shows codes. */
export const PAIRING_READY_TIMEOUT_MS = 20_000;

export class DevicePairing {
  /** The number a code was asked for, on connection `epoch` (asking again for it answers the code on show). */
  private requested: { epoch: number; phone: string } | undefined;
  /** pair() calls, one at a time: a second one finds the code the first one got. */
  private pairings: Promise<unknown> = Promise.resolve();

  constructor(private readonly session: PairingSession) {}

  pair(phone: string, readyTimeoutMs = PAIRING_READY_TIMEOUT_MS): Promise<CommandResult & { pairing: PairingCode }> {
    const result = this.pairings.then(() => this.pairOnce(phone, readyTimeoutMs));
    this.pairings = result.catch(() => undefined);
    return result;
  }

  private async pairOnce(phone: string, readyTimeoutMs: number): Promise<CommandResult & { pairing: PairingCode }> {
    const before = await this.session.inspect();
    const requested = this.requested?.epoch === before.epoch ? this.requested.phone : undefined;
    if (before.pairing && requested !== undefined) {
      if (requested === phone) return { state: 'pairing', changed: false, pairing: before.pairing };
      throw new DomainError(
        'pairing_unavailable',
        `the session is pairing with another number (${requested}): close it first to link ${phone}`,
        { reason: 'pairing_another_number' },
      );
    }
    // Opening a stopped session with a linked account would connect that account.
    if (before.state === 'online' || (!isRunning(before.state) && before.linkedPhone !== undefined))
      throw linkedAccountError(before.state);
    const opened = await this.session.open();
    try {
      return await this.requestPairing(phone, readyTimeoutMs, opened);
    } catch (error) {
      // Opened for this request only: leave the session stopped as it was (logged_out stays logged_out).
      if (opened.changed) await this.undoOpen(before.state);
      throw error;
    }
  }

  private async requestPairing(
    phone: string,
    readyTimeoutMs: number,
    opened: CommandResult,
  ): Promise<CommandResult & { pairing: PairingCode }> {
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      const { state } = await this.session.settled();
      if (state === 'qr' || state === 'pairing') break;
      if (state === 'online' || (state !== 'connecting' && state !== 'reconnecting')) throw linkedAccountError(state);
      if (Date.now() > deadline)
        throw new DomainError(
          'pairing_unavailable',
          `the session is still ${state}: the connection did not get ready for pairing; try again`,
        );
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const { epoch, connection } = this.session.connection();
    if (!connection?.requestPairingCode)
      throw new DomainError('pairing_unavailable', 'this engine cannot link by pairing code; scan the QR code');
    this.requested = { epoch, phone };
    await connection.requestPairingCode(phone);
    const { state, position } = await this.session.settled();
    const pairing = this.session.pairingCode();
    if (!pairing)
      throw new DomainError('pairing_unavailable', `the session is ${state}: no pairing code was issued; try again`);
    return { state: 'pairing', changed: true, position: position || opened.position || 0, pairing };
  }

  /** Closes again a session pair() opened, unless it has stopped by itself meanwhile (its record then says why). */
  private async undoOpen(stateBefore: SessionStateName): Promise<void> {
    const { state } = await this.session.settled();
    if (state === undefined || !isRunning(state)) return;
    try {
      await this.session.close({ logout: stateBefore === 'logged_out', reason: 'pairing_failed' });
    } catch (error) {
      this.session.log.warn(
        { deviceId: this.session.deviceId, err: error },
        'could not close the session a refused pairing request opened',
      );
    }
  }
}

const linkedAccountError = (state: SessionStateName | undefined) =>
  new DomainError(
    'pairing_unavailable',
    `the session is ${state}: pairing by code needs a session without a linked account (close it with logout first)`,
  );
