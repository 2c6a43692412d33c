/**
 * Events of a stream ticket's stream (`stream-ticket-<ticketId>`): its one use (src/auth/stream-tickets.ts). The
 * stream, not a process's memory, makes a ticket single-use, so that any process or machine can redeem it.
 */
export const streamTicketStream = (ticketId: string) => `stream-ticket-${ticketId}`;

export interface StreamTicketRedeemedData {
  ticketId: string;
  /** ISO 8601. */
  at: string;
}

export type StreamTicketEvent = { type: 'StreamTicketRedeemed'; data: StreamTicketRedeemedData };

export const STREAM_TICKET_EVENT_TYPES: ReadonlySet<string> = new Set(['StreamTicketRedeemed']);
