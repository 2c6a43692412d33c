/**
 * Single-use stream tickets (docs/api-guide.md, "WebSocket"): a browser cannot send headers on a WebSocket,
 * and keys never go in URLs, so a client with a key asks for a ticket (`POST /stream/tickets`) and passes it
 * as `?ticket=`. A ticket stands for the caller that asked for it, holds for TICKET_TTL_MS and is used up by
 * its first use, whether it succeeds or not. Kept in this process's memory: with several processes behind a
 * balancer, the ticket is redeemed where it was issued only if the balancer keeps the client there.
 */
import { randomBytes } from 'node:crypto';
import type { Caller } from './authenticator.js';
import { hashKey } from './keys.js';

export const TICKET_TTL_MS = 30_000;
/** At most this many unexpired tickets at once (beyond, the oldest go). */
const MAX_TICKETS = 100_000;

export class StreamTickets {
  /** By the ticket's hash (a dump of the memory shows no usable ticket), in the order issued. */
  private readonly tickets = new Map<string, { caller: Caller; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  issue(caller: Caller): { ticket: string; expiresAt: string } {
    this.sweep();
    const ticket = `st_${randomBytes(24).toString('base64url')}`;
    const expiresAt = this.now() + TICKET_TTL_MS;
    this.tickets.set(hashKey(ticket), { caller, expiresAt });
    return { ticket, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** The caller the ticket stands for; undefined when it is unknown, used or expired. Used up either way. */
  redeem(ticket: string): Caller | undefined {
    const hash = hashKey(ticket);
    const entry = this.tickets.get(hash);
    if (!entry) return undefined;
    this.tickets.delete(hash);
    return entry.expiresAt > this.now() ? entry.caller : undefined;
  }

  private sweep(): void {
    const now = this.now();
    for (const [hash, entry] of this.tickets) {
      // Issued in order, so they expire in order (unless the clock went back): stop at the first that holds.
      if (entry.expiresAt > now && this.tickets.size < MAX_TICKETS) break;
      this.tickets.delete(hash);
    }
  }
}
