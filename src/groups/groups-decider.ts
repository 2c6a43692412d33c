/**
 * The decider of a device's groups stream (`groups-<deviceId>`). The state is every group the account is
 * in, with its settings and participants; a report or a change that says nothing new is decided into
 * nothing, so the network echoing this device's own change (or a refresh that finds nothing changed)
 * records nothing. The checks that refuse a command (not in the group, not an admin) read the same state.
 */
import type { Decider } from '../commands/decider.js';
import { DomainError } from '../errors/domain-error.js';
import {
  GROUP_EVENT_TYPES,
  type GroupEvent,
  type GroupMetadata,
  type GroupMetadataRecordedData,
  type GroupRole,
  type GroupSettingsChange,
  type ParticipantAction,
} from './group-events.js';

export interface GroupState {
  subject: string;
  description?: string;
  announce: boolean;
  locked: boolean;
  /** Disappearing messages, seconds (0: off). */
  ephemeral?: number;
  joinApproval?: boolean;
  membersCanAdd?: boolean;
  /** number → role */
  participants: Readonly<Record<string, GroupRole>>;
  /** The stream's `seq` when this group last changed. */
  seq: number;
  /** Numbers whose request to join is open: a notification delivered again (after a reconnect) records nothing. */
  joinRequests?: readonly string[];
  /** The picture was removed last: a removal delivered again records nothing. */
  pictureRemoved?: boolean;
}

export interface GroupsState {
  groups: Readonly<Record<string, GroupState>>;
  /** Events folded so far: a list fetched from the network at `seq` n says nothing about later changes. */
  seq: number;
}

export type GroupsCommand =
  /** `listedAt`: the state's `seq` when the network was asked; groups changed since are left as they are. */
  | {
      type: 'RecordGroups';
      deviceId: string;
      groups: GroupMetadata[];
      reason: GroupMetadataRecordedData['reason'];
      listedAt?: number;
    }
  /** The network's whole list, asked at `listedAt`: what changed is recorded, groups missing from it are left (`gone`). */
  | { type: 'SyncGroups'; deviceId: string; groups: GroupMetadata[]; listedAt: number }
  | { type: 'RecordUpdate'; deviceId: string; groupId: string; change: GroupSettingsChange; by?: string }
  /** `me`: the account's number; its removal means the account left the group. */
  | {
      type: 'RecordParticipants';
      deviceId: string;
      groupId: string;
      action: ParticipantAction;
      participants: string[];
      by?: string;
      me?: string;
    }
  | { type: 'RecordLeft'; deviceId: string; groupId: string; reason: 'left' | 'removed' | 'gone' }
  | { type: 'RecordInviteRevoked'; deviceId: string; groupId: string }
  | { type: 'RecordPicture'; deviceId: string; groupId: string; removed: boolean; by?: string }
  | {
      type: 'RecordJoinRequest';
      deviceId: string;
      groupId: string;
      number: string;
      action: 'created' | 'revoked';
    }
  /** This account's admin rejected these requests (the engine answered `ok` for each). */
  | { type: 'RecordJoinRequestsRejected'; deviceId: string; groupId: string; numbers: readonly string[] };

export const stateOfGroup = (group: GroupMetadata, seq = 0): GroupState => ({
  seq,
  subject: group.subject,
  ...(group.description === undefined ? {} : { description: group.description }),
  announce: group.announce,
  locked: group.locked,
  ...extrasOf(group),
  participants: Object.fromEntries(group.participants.map((p) => [p.number, p.role])),
});

/** The settings of Part 3 (disappearing messages, join approval, who adds), where known. */
function extrasOf(group: GroupSettingsChange): Pick<GroupState, 'ephemeral' | 'joinApproval' | 'membersCanAdd'> {
  return {
    ...(group.ephemeral === undefined ? {} : { ephemeral: group.ephemeral }),
    ...(group.joinApproval === undefined ? {} : { joinApproval: group.joinApproval }),
    ...(group.membersCanAdd === undefined ? {} : { membersCanAdd: group.membersCanAdd }),
  };
}

function sameGroup(a: GroupState, b: GroupState): boolean {
  if (a.subject !== b.subject || a.description !== b.description || a.announce !== b.announce || a.locked !== b.locked)
    return false;
  if (
    (a.ephemeral ?? 0) !== (b.ephemeral ?? 0) ||
    (a.joinApproval ?? false) !== (b.joinApproval ?? false) ||
    (a.membersCanAdd ?? false) !== (b.membersCanAdd ?? false)
  )
    return false;
  const left = Object.entries(a.participants);
  if (left.length !== Object.keys(b.participants).length) return false;
  return left.every(([number, role]) => b.participants[number] === role);
}

/** The group changed after the network's list was asked for: the list is older news. */
function changedSince(state: GroupsState, groupId: string, listedAt: number | undefined): boolean {
  const seq = state.groups[groupId]?.seq;
  return listedAt !== undefined && seq !== undefined && seq > listedAt;
}

function isKnownAs(state: GroupsState, group: GroupMetadata): boolean {
  const known = state.groups[group.groupId];
  return known !== undefined && sameGroup(known, stateOfGroup(group));
}

/** The fields of `change` that differ from the group as known (all of them for an unknown group). */
function effectiveChange(group: GroupState | undefined, change: GroupSettingsChange): GroupSettingsChange {
  const effective: GroupSettingsChange = {};
  if (change.subject !== undefined && change.subject !== group?.subject) effective.subject = change.subject;
  if (change.description !== undefined && change.description !== (group?.description ?? ''))
    effective.description = change.description;
  if (change.announce !== undefined && change.announce !== group?.announce) effective.announce = change.announce;
  if (change.locked !== undefined && change.locked !== group?.locked) effective.locked = change.locked;
  if (change.ephemeral !== undefined && change.ephemeral !== (group?.ephemeral ?? (group ? 0 : undefined)))
    effective.ephemeral = change.ephemeral;
  if (change.joinApproval !== undefined && change.joinApproval !== (group?.joinApproval ?? (group ? false : undefined)))
    effective.joinApproval = change.joinApproval;
  if (
    change.membersCanAdd !== undefined &&
    change.membersCanAdd !== (group?.membersCanAdd ?? (group ? false : undefined))
  )
    effective.membersCanAdd = change.membersCanAdd;
  return effective;
}

/** The participants an action actually changes (all of them for an unknown group). */
function effectiveParticipants(
  group: GroupState | undefined,
  action: ParticipantAction,
  numbers: readonly string[],
): string[] {
  const unique = [...new Set(numbers)];
  if (!group) return unique;
  const role = (n: string) => group.participants[n];
  switch (action) {
    case 'add':
      return unique.filter((n) => role(n) === undefined);
    case 'remove':
      return unique.filter((n) => role(n) !== undefined);
    case 'promote':
      return unique.filter((n) => role(n) === 'member');
    case 'demote':
      return unique.filter((n) => role(n) === 'admin');
  }
}

function withParticipants(group: GroupState, action: ParticipantAction, numbers: readonly string[]): GroupState {
  const participants = { ...group.participants };
  for (const number of numbers) {
    if (action === 'add') participants[number] = 'member';
    else if (action === 'remove') delete participants[number];
    else if (participants[number] !== undefined && participants[number] !== 'superadmin')
      participants[number] = action === 'promote' ? 'admin' : 'member';
  }
  // One who joined has no open request any more.
  const joinRequests = action === 'add' ? group.joinRequests?.filter((n) => !numbers.includes(n)) : group.joinRequests;
  return { ...group, participants, ...(joinRequests ? { joinRequests } : {}) };
}

function without(groups: Readonly<Record<string, GroupState>>, groupId: string): Record<string, GroupState> {
  const copy = { ...groups };
  delete copy[groupId];
  return copy;
}

export const groupsDecider: Decider<GroupsState, GroupsCommand, GroupEvent> = {
  eventTypes: GROUP_EVENT_TYPES,

  initialState: () => ({ groups: {}, seq: 0 }),

  evolve(before, event) {
    const seq = before.seq + 1;
    const state = { ...before, seq };
    const { groups } = state;
    switch (event.type) {
      case 'GroupMetadataRecorded': {
        // The metadata says nothing of open join requests or the picture: what the stream knew stays.
        const { joinRequests, pictureRemoved } = groups[event.data.group.groupId] ?? {};
        const next: GroupState = {
          ...stateOfGroup(event.data.group, seq),
          ...(joinRequests ? { joinRequests } : {}),
          ...(pictureRemoved !== undefined ? { pictureRemoved } : {}),
        };
        return { seq, groups: { ...groups, [event.data.group.groupId]: next } };
      }
      case 'GroupUpdated': {
        const group = groups[event.data.groupId];
        if (!group) return state;
        const { subject, description, announce, locked } = event.data;
        const next: GroupState = {
          ...group,
          seq,
          ...(subject === undefined ? {} : { subject }),
          ...(description === undefined ? {} : { description }),
          ...(announce === undefined ? {} : { announce }),
          ...(locked === undefined ? {} : { locked }),
          ...extrasOf(event.data),
        };
        return { seq, groups: { ...groups, [event.data.groupId]: next } };
      }
      case 'GroupParticipantsChanged': {
        const group = groups[event.data.groupId];
        if (!group) return state;
        return {
          seq,
          groups: {
            ...groups,
            [event.data.groupId]: { ...withParticipants(group, event.data.action, event.data.participants), seq },
          },
        };
      }
      case 'GroupLeft':
        return groups[event.data.groupId] ? { seq, groups: without(groups, event.data.groupId) } : state;
      case 'GroupPictureChanged': {
        const group = groups[event.data.groupId];
        if (!group) return state;
        return { seq, groups: { ...groups, [event.data.groupId]: { ...group, pictureRemoved: event.data.removed } } };
      }
      case 'GroupJoinRequested': {
        const group = groups[event.data.groupId];
        if (!group) return state;
        const open = (group.joinRequests ?? []).filter((number) => number !== event.data.number);
        if (event.data.action === 'created') open.push(event.data.number);
        return { seq, groups: { ...groups, [event.data.groupId]: { ...group, joinRequests: open } } };
      }
      case 'GroupJoinRequestsRejected': {
        const group = groups[event.data.groupId];
        if (!group) return state;
        const open = (group.joinRequests ?? []).filter((number) => !event.data.numbers.includes(number));
        return { seq, groups: { ...groups, [event.data.groupId]: { ...group, joinRequests: open } } };
      }
      case 'GroupInviteRevoked':
        return state;
    }
  },

  decide(command, state) {
    const { deviceId } = command;
    switch (command.type) {
      case 'RecordGroups':
        return command.groups
          .filter((group) => !isKnownAs(state, group) && !changedSince(state, group.groupId, command.listedAt))
          .map((group) => ({
            type: 'GroupMetadataRecorded' as const,
            data: { deviceId, group, reason: command.reason },
          }));
      case 'SyncGroups': {
        const events: GroupEvent[] = [];
        const listed = new Set<string>();
        for (const group of command.groups) {
          listed.add(group.groupId);
          if (!isKnownAs(state, group) && !changedSince(state, group.groupId, command.listedAt))
            events.push({ type: 'GroupMetadataRecorded', data: { deviceId, group, reason: 'refreshed' } });
        }
        for (const groupId of Object.keys(state.groups))
          if (!listed.has(groupId) && !changedSince(state, groupId, command.listedAt))
            events.push({ type: 'GroupLeft', data: { deviceId, groupId, reason: 'gone' } });
        return events;
      }
      case 'RecordUpdate': {
        const change = effectiveChange(state.groups[command.groupId], command.change);
        if (Object.keys(change).length === 0) return [];
        return [
          {
            type: 'GroupUpdated',
            data: { deviceId, groupId: command.groupId, ...change, ...(command.by ? { by: command.by } : {}) },
          },
        ];
      }
      case 'RecordParticipants': {
        const participants = effectiveParticipants(state.groups[command.groupId], command.action, command.participants);
        if (participants.length === 0) return [];
        const { groupId, action, by, me } = command;
        const events: GroupEvent[] = [
          {
            type: 'GroupParticipantsChanged',
            data: { deviceId, groupId, action, participants, ...(by ? { by } : {}) },
          },
        ];
        if (action === 'remove' && me !== undefined && participants.includes(me) && state.groups[groupId]) {
          events.push({ type: 'GroupLeft', data: { deviceId, groupId, reason: 'removed' } });
        }
        return events;
      }
      case 'RecordLeft':
        return state.groups[command.groupId]
          ? [{ type: 'GroupLeft', data: { deviceId, groupId: command.groupId, reason: command.reason } }]
          : [];
      case 'RecordInviteRevoked':
        return [{ type: 'GroupInviteRevoked', data: { deviceId, groupId: command.groupId } }];
      case 'RecordPicture': {
        const { groupId, removed, by } = command;
        const group = state.groups[groupId];
        // Not a group of the account's, or a removal told again: nothing changed.
        if (!group || (removed && group.pictureRemoved === true)) return [];
        return [{ type: 'GroupPictureChanged', data: { deviceId, groupId, removed, ...(by ? { by } : {}) } }];
      }
      case 'RecordJoinRequest': {
        const { groupId, number, action } = command;
        const group = state.groups[groupId];
        if (!group) return [];
        // A request delivered again (a reconnect) is open already; a withdrawal of none open is no news.
        const open = (group.joinRequests ?? []).includes(number);
        if (open === (action === 'created')) return [];
        return [{ type: 'GroupJoinRequested', data: { deviceId, groupId, number, action } }];
      }
      case 'RecordJoinRequestsRejected': {
        const { groupId } = command;
        const open = state.groups[groupId]?.joinRequests ?? [];
        // Only requests the stream holds open are closed: one it never heard of (or closed already) is no news.
        const numbers = command.numbers.filter((number) => open.includes(number));
        if (numbers.length === 0) return [];
        return [{ type: 'GroupJoinRequestsRejected', data: { deviceId, groupId, numbers } }];
      }
    }
  },
};

/** The group as the stream knows it; `404 not_found` when the account is not in it. */
export function requireGroup(state: GroupsState, groupId: string): GroupState {
  const group = state.groups[groupId];
  if (!group) throw new DomainError('not_found', `the account is not in the group ${groupId}`);
  return group;
}

/** `403 not_group_admin` unless `me` is an admin (or the creator) of the group. */
export function requireAdmin(state: GroupsState, groupId: string, me: string): GroupState {
  const group = requireGroup(state, groupId);
  const role = group.participants[me];
  if (role !== 'admin' && role !== 'superadmin')
    throw new DomainError('not_group_admin', `the account is not an admin of the group ${groupId}`);
  return group;
}
