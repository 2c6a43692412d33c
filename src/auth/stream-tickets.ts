/**
 * Single-use stream tickets (docs/api-guide.md, "WebSocket"): a browser cannot send headers on a WebSocket,
 * and keys never go in URLs, so a client with a key asks for a ticket (`POST /stream/tickets`) and passes it
 * as `?ticket=`. A ticket stands for the caller that asked for it, holds for TICKET_TTL_MS and is used up by
 * its first use, whether it succeeds or not.
 *
 * Any process can redeem it (several processes share a port, a balancer spreads clients over machines): the
 * ticket carries its caller and expiry, signed with a key derived from the admin key (the same on every process of
 * a gateway), and its one use is recorded on its own stream (`stream-ticket-<id>`), whose decider refuses a second.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { CommandHandler } from '../commands/command-handler.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { Caller } from './authenticator.js';
import { streamTicketDecider } from './stream-ticket-decider.js';
import { streamTicketStream } from './stream-ticket-events.js';

export const TICKET_TTL_MS = 30_000;
const PREFIX = 'st_';

interface TicketBody {
  id: string;
  /** Epoch ms. */
  exp: number;
  caller: Caller;
}

export class StreamTickets {
  private readonly key: Buffer;
  private readonly commands: CommandHandler<
    ReturnType<typeof streamTicketDecider.initialState>,
    Parameters<typeof streamTicketDecider.decide>[0],
    ReturnType<typeof streamTicketDecider.decide>[number]
  >;

  constructor(
    store: EventStore,
    /** The admin key: every process of the gateway has it, nobody without it can make a ticket. */
    secret: string,
    private readonly now: () => number = Date.now,
  ) {
    this.key = createHmac('sha256', 'dmg stream tickets').update(secret).digest();
    this.commands = new CommandHandler({ store, decider: streamTicketDecider });
  }

  issue(caller: Caller): { ticket: string; expiresAt: string } {
    const body: TicketBody = { id: randomBytes(16).toString('base64url'), exp: this.now() + TICKET_TTL_MS, caller };
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
    return { ticket: `${PREFIX}${payload}.${this.sign(payload)}`, expiresAt: new Date(body.exp).toISOString() };
  }

  /** The caller the ticket stands for; undefined when it is not one of ours, expired or used. Used up either way. */
  async redeem(ticket: string): Promise<Caller | undefined> {
    const body = this.verified(ticket);
    if (!body) return undefined;
    const { events } = await this.commands.handle(streamTicketStream(body.id), {
      type: 'Redeem',
      ticketId: body.id,
      at: new Date(this.now()).toISOString(),
    });
    return events.length > 0 && body.exp > this.now() ? body.caller : undefined;
  }

  private verified(ticket: string): TicketBody | undefined {
    if (!ticket.startsWith(PREFIX)) return undefined;
    const [payload, mac, ...rest] = ticket.slice(PREFIX.length).split('.');
    if (!payload || !mac || rest.length > 0) return undefined;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TicketBody;
      return typeof body.id === 'string' && /^[A-Za-z0-9_-]{16,64}$/.test(body.id) && typeof body.exp === 'number'
        ? body
        : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
