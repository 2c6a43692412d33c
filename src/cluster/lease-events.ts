/**
 * Which process runs which device (docs/architecture.md, "Several processes"). Every process is a member
 * with a stream of its own (`member-<memberId>`: joined, heartbeats, left); every device has a lease stream
 * (`lease-<deviceId>`) saying which member holds it. A lease holds as long as its member keeps
 * heartbeating; its stream's revision is the fencing token of every write the owner makes for the device.
 */
export const leaseStream = (deviceId: string) => `lease-${deviceId}`;
export const memberStream = (memberId: string) => `member-${memberId}`;
export const LEASE_STREAM_PREFIX = 'lease-';
export const MEMBER_STREAM_PREFIX = 'member-';

export interface LeaseAcquiredData {
  deviceId: string;
  owner: string;
  /** The member that held it before (absent: nobody) and why it was taken. */
  previousOwner?: string;
  at: string;
}

export interface LeaseReleasedData {
  deviceId: string;
  owner: string;
  /** `stopping` (the member stops), `rebalance` (it hands devices to a newer member), `deleted`. */
  reason: string;
  at: string;
}

export type LeaseEvent =
  { type: 'LeaseAcquired'; data: LeaseAcquiredData } | { type: 'LeaseReleased'; data: LeaseReleasedData };

export const LEASE_EVENT_TYPES: ReadonlySet<string> = new Set<LeaseEvent['type']>(['LeaseAcquired', 'LeaseReleased']);

export interface MemberJoinedData {
  memberId: string;
  host: string;
  pid: number;
  at: string;
}

export type MemberEvent =
  | { type: 'MemberJoined'; data: MemberJoinedData }
  | { type: 'MemberHeartbeat'; data: { memberId: string; at: string } }
  | { type: 'MemberLeft'; data: { memberId: string; at: string } };

export const MEMBER_EVENT_TYPES: ReadonlySet<string> = new Set<MemberEvent['type']>([
  'MemberJoined',
  'MemberHeartbeat',
  'MemberLeft',
]);
