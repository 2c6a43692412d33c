/**
 * The decider of a stream ticket's stream (`stream-ticket-<ticketId>`): the first redemption is recorded, any later
 * one records nothing (the ticket is used up), whichever process tries.
 */
import type { Decider } from '../commands/decider.js';
import { STREAM_TICKET_EVENT_TYPES, type StreamTicketEvent } from './stream-ticket-events.js';

export interface StreamTicketState {
  redeemed: boolean;
}

export type StreamTicketCommand = { type: 'Redeem'; ticketId: string; at: string };

export const streamTicketDecider: Decider<StreamTicketState, StreamTicketCommand, StreamTicketEvent> = {
  eventTypes: STREAM_TICKET_EVENT_TYPES,
  initialState: () => ({ redeemed: false }),
  evolve: () => ({ redeemed: true }),
  decide: (command, state) =>
    state.redeemed ? [] : [{ type: 'StreamTicketRedeemed', data: { ticketId: command.ticketId, at: command.at } }],
};
