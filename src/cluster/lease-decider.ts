/**
 * The deciders of membership and leases (lease-events.ts). Whether the holder of a lease is still alive
 * is not in the lease stream: the caller passes the members it has seen heartbeating within the lease
 * timeout (by its own clock, so clocks of different machines never meet), which keeps decide pure.
 */
import type { Decider } from '../commands/decider.js';
import { LEASE_EVENT_TYPES, type LeaseEvent, MEMBER_EVENT_TYPES, type MemberEvent } from './lease-events.js';

export interface LeaseState {
  owner: string | undefined;
}

export type LeaseCommand =
  | { type: 'AcquireLease'; deviceId: string; member: string; liveMembers: ReadonlySet<string>; at: string }
  | { type: 'ReleaseLease'; deviceId: string; member: string; reason: string; at: string };

export const leaseDecider: Decider<LeaseState, LeaseCommand, LeaseEvent> = {
  eventTypes: LEASE_EVENT_TYPES,
  initialState: () => ({ owner: undefined }),
  evolve: (_state, event) => ({ owner: event.type === 'LeaseAcquired' ? event.data.owner : undefined }),
  decide(command, state) {
    if (command.type === 'AcquireLease') {
      // Already ours, or held by a member that still heartbeats: nothing changes (the caller reads the owner).
      if (state.owner === command.member) return [];
      if (state.owner !== undefined && command.liveMembers.has(state.owner)) return [];
      const previous = state.owner === undefined ? {} : { previousOwner: state.owner };
      return [
        {
          type: 'LeaseAcquired',
          data: { deviceId: command.deviceId, owner: command.member, ...previous, at: command.at },
        },
      ];
    }
    if (state.owner !== command.member) return [];
    return [
      {
        type: 'LeaseReleased',
        data: { deviceId: command.deviceId, owner: command.member, reason: command.reason, at: command.at },
      },
    ];
  },
};

export interface MemberState {
  joined: boolean;
  left: boolean;
}

export type MemberCommand =
  | { type: 'Join'; memberId: string; host: string; pid: number; at: string }
  | { type: 'Heartbeat'; memberId: string; at: string }
  | { type: 'Leave'; memberId: string; at: string };

export const memberDecider: Decider<MemberState, MemberCommand, MemberEvent> = {
  eventTypes: MEMBER_EVENT_TYPES,
  initialState: () => ({ joined: false, left: false }),
  evolve: (state, event) => ({ joined: true, left: state.left || event.type === 'MemberLeft' }),
  decide(command, state) {
    // A member that left is gone for good: a process that starts again joins under a new id.
    if (state.left) return [];
    switch (command.type) {
      case 'Join':
        return state.joined
          ? []
          : [
              {
                type: 'MemberJoined',
                data: { memberId: command.memberId, host: command.host, pid: command.pid, at: command.at },
              },
            ];
      case 'Heartbeat':
        return [{ type: 'MemberHeartbeat', data: { memberId: command.memberId, at: command.at } }];
      case 'Leave':
        return state.joined ? [{ type: 'MemberLeft', data: { memberId: command.memberId, at: command.at } }] : [];
    }
  },
};
