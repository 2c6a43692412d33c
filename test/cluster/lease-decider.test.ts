import { describe, it } from 'vitest';
import { leaseDecider, memberDecider } from '../../src/cluster/lease-decider.js';
import { deciderSpecification } from '../support/decider-specification.js';

const leases = deciderSpecification(leaseDecider);
const members = deciderSpecification(memberDecider);
const at = '2026-01-01T00:00:00.000Z';
const acquired = (owner: string, previousOwner?: string) => ({
  type: 'LeaseAcquired' as const,
  data: { deviceId: 'd', owner, ...(previousOwner ? { previousOwner } : {}), at },
});
const released = (owner: string, reason = 'stopping') => ({
  type: 'LeaseReleased' as const,
  data: { deviceId: 'd', owner, reason, at },
});
const acquire = (member: string, live: string[] = []) => ({
  type: 'AcquireLease' as const,
  deviceId: 'd',
  member,
  liveMembers: new Set(live),
  at,
});

describe('the lease decider', () => {
  it('acquires a device nobody holds', () =>
    leases
      .given([])
      .when(acquire('a'))
      .then([acquired('a')]));
  it('acquires a released device', () =>
    leases
      .given([acquired('a'), released('a')])
      .when(acquire('b', ['a']))
      .then([acquired('b')]));
  it('leaves a lease held by a live member alone', () =>
    leases
      .given([acquired('a')])
      .when(acquire('b', ['a', 'b']))
      .thenNothing());
  it('takes over a lease whose member stopped heartbeating', () =>
    leases
      .given([acquired('a')])
      .when(acquire('b', ['b']))
      .then([acquired('b', 'a')]));
  it('appends nothing when the member holds it already', () =>
    leases
      .given([acquired('a')])
      .when(acquire('a', ['a']))
      .thenNothing());
  it('releases only its own lease', () => {
    leases
      .given([acquired('a')])
      .when({ type: 'ReleaseLease', deviceId: 'd', member: 'a', reason: 'rebalance', at })
      .then([released('a', 'rebalance')]);
    leases
      .given([acquired('b', 'a')])
      .when({ type: 'ReleaseLease', deviceId: 'd', member: 'a', reason: 'stopping', at })
      .thenNothing();
  });
});

describe('the member decider', () => {
  const joined = { type: 'MemberJoined' as const, data: { memberId: 'm', host: 'h', pid: 1, at } };
  it('joins once, heartbeats, leaves once', () => {
    members.given([]).when({ type: 'Join', memberId: 'm', host: 'h', pid: 1, at }).then([joined]);
    members.given([joined]).when({ type: 'Join', memberId: 'm', host: 'h', pid: 1, at }).thenNothing();
    members
      .given([joined])
      .when({ type: 'Heartbeat', memberId: 'm', at })
      .then([{ type: 'MemberHeartbeat', data: { memberId: 'm', at } }]);
    members
      .given([joined])
      .when({ type: 'Leave', memberId: 'm', at })
      .then([{ type: 'MemberLeft', data: { memberId: 'm', at } }]);
  });
  it('a member that left never heartbeats again', () =>
    members
      .given([joined, { type: 'MemberLeft', data: { memberId: 'm', at } }])
      .when({ type: 'Heartbeat', memberId: 'm', at })
      .thenNothing());
});
