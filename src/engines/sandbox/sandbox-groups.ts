/**
 * Groups of the simulated network: ids shaped as WhatsApp's (`120363` + 12 digits + `@g.us`), their
 * settings, members with roles and invite codes. Sandbox devices whose number is a member receive the
 * group's messages and its changes. The rules a network enforces live here: only admins change a group,
 * numbers ending in 0000 cannot be added, the creator cannot be removed or demoted.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { GroupMetadata, GroupRole, GroupSettingsChange, ParticipantAction } from '../../groups/group-events.js';
import type { ParticipantResult } from '../../groups/group-operations.js';
import { EngineError } from '../engine.js';
import { numberExists } from './sandbox-numbers.js';

export interface SandboxGroup {
  groupId: string;
  subject: string;
  description: string;
  announce: boolean;
  locked: boolean;
  /** Number → role, the creator first. */
  members: Map<string, GroupRole>;
  inviteCode: string;
  ephemeral?: number;
  joinApproval?: boolean;
  membersCanAdd?: boolean;
  /** SHA-256 (hex) of the picture's bytes, when it has one. */
  picture?: string;
  /** Pending join requests: number → unix seconds. */
  requests?: Map<string, number>;
}

export const SANDBOX_GROUP_PATTERN = /^120363\d{12}@g\.us$/;

export function newSandboxGroupId(): string {
  let digits = '';
  for (let i = 0; i < 12; i++) digits += String(randomInt(10));
  return `120363${digits}@g.us`;
}

const newInviteCode = () => randomBytes(16).toString('base64url').slice(0, 22);

/** The groups as kept in the store (see SandboxEngine): members as [number, role] pairs. */
export type StoredSandboxGroup = Omit<SandboxGroup, 'members' | 'requests'> & {
  members: Array<[string, GroupRole]>;
  requests?: Array<[string, number]>;
};

export class SandboxGroups {
  private readonly groups = new Map<string, SandboxGroup>();
  private readonly byInvite = new Map<string, string>();
  /** Told after every change (the engine keeps the groups in the store, so that they outlive the process). */
  onChange: (() => void) | undefined;

  toJSON(): StoredSandboxGroup[] {
    return [...this.groups.values()].map((group) => ({
      ...group,
      members: [...group.members],
      requests: [...(group.requests ?? [])],
    }));
  }

  /** Groups kept from an earlier process; ones made since are kept too. */
  restore(stored: readonly StoredSandboxGroup[]): void {
    for (const group of stored) {
      if (this.groups.has(group.groupId)) continue;
      this.groups.set(group.groupId, {
        ...group,
        members: new Map(group.members),
        requests: new Map(group.requests ?? []),
      });
      this.byInvite.set(group.inviteCode, group.groupId);
    }
  }

  /** `number` joins by invite. */
  join(group: SandboxGroup, number: string): void {
    group.members.set(number, 'member');
    this.onChange?.();
  }

  /** `members`: the creator first (superadmin), then the others (numbers that do not exist are left out by the caller). */
  create(subject: string, members: readonly string[]): SandboxGroup {
    let groupId = newSandboxGroupId();
    while (this.groups.has(groupId)) groupId = newSandboxGroupId();
    const group: SandboxGroup = {
      groupId,
      subject,
      description: '',
      announce: false,
      locked: false,
      members: new Map(members.map((number, i) => [number, i === 0 ? 'superadmin' : 'member'])),
      inviteCode: newInviteCode(),
    };
    this.groups.set(groupId, group);
    this.byInvite.set(group.inviteCode, groupId);
    this.onChange?.();
    return group;
  }

  get(groupId: string): SandboxGroup | undefined {
    return this.groups.get(groupId);
  }

  /** The groups `number` is a member of. */
  of(number: string): SandboxGroup[] {
    return [...this.groups.values()].filter((group) => group.members.has(number));
  }

  /** The group, if `number` is a member; else the network's "not found". */
  memberOf(groupId: string, number: string): SandboxGroup {
    const group = this.groups.get(groupId);
    if (!group?.members.has(number))
      throw new EngineError('group_not_found', `the account is not in the group ${groupId}`, true);
    return group;
  }

  adminOf(groupId: string, number: string): SandboxGroup {
    const group = this.memberOf(groupId, number);
    const role = group.members.get(number);
    if (role !== 'admin' && role !== 'superadmin')
      throw new EngineError('not_group_admin', `the account is not an admin of the group ${groupId}`, true);
    return group;
  }

  update(group: SandboxGroup, change: GroupSettingsChange): void {
    if (change.subject !== undefined) group.subject = change.subject;
    if (change.description !== undefined) group.description = change.description;
    if (change.announce !== undefined) group.announce = change.announce;
    if (change.locked !== undefined) group.locked = change.locked;
    if (change.ephemeral !== undefined) group.ephemeral = change.ephemeral;
    if (change.joinApproval !== undefined) group.joinApproval = change.joinApproval;
    if (change.membersCanAdd !== undefined) group.membersCanAdd = change.membersCanAdd;
    this.onChange?.();
  }

  /** Sets (a digest of the bytes) or removes (undefined) the picture. */
  setPicture(group: SandboxGroup, digest: string | undefined): void {
    if (digest === undefined) delete group.picture;
    else group.picture = digest;
    this.onChange?.();
  }

  /** `number` asks to join a group that needs approval; false when it asked already. */
  request(group: SandboxGroup, number: string, at: number): boolean {
    group.requests ??= new Map();
    if (group.requests.has(number)) return false;
    group.requests.set(number, at);
    this.onChange?.();
    return true;
  }

  /** Approves (the number becomes a member) or rejects the requests, one result each. */
  answerRequests(group: SandboxGroup, approve: boolean, numbers: readonly string[]): ParticipantResult[] {
    const results = [...new Set(numbers)].map((number): ParticipantResult => {
      if (!group.requests?.has(number)) return { number, status: 'not_found' };
      group.requests.delete(number);
      if (approve) group.members.set(number, 'member');
      return { number, status: 'ok' };
    });
    this.onChange?.();
    return results;
  }

  /** Applies the action number by number, as WhatsApp answers it: one status each. */
  participants(group: SandboxGroup, action: ParticipantAction, numbers: readonly string[]): ParticipantResult[] {
    const results = this.applyParticipants(group, action, numbers);
    this.onChange?.();
    return results;
  }

  private applyParticipants(
    group: SandboxGroup,
    action: ParticipantAction,
    numbers: readonly string[],
  ): ParticipantResult[] {
    return [...new Set(numbers)].map((number) => {
      const role = group.members.get(number);
      if (action === 'add') {
        if (!numberExists(number)) return { number, status: 'not_found' };
        if (role) return { number, status: 'already_in_group' };
        group.members.set(number, 'member');
        return { number, status: 'ok' };
      }
      if (!role) return { number, status: 'not_in_group' };
      if (role === 'superadmin') return { number, status: 'not_allowed' };
      if (action === 'remove') group.members.delete(number);
      else group.members.set(number, action === 'promote' ? 'admin' : 'member');
      return { number, status: 'ok' };
    });
  }

  revokeInvite(group: SandboxGroup): string {
    this.byInvite.delete(group.inviteCode);
    group.inviteCode = newInviteCode();
    this.byInvite.set(group.inviteCode, group.groupId);
    this.onChange?.();
    return group.inviteCode;
  }

  byInviteCode(code: string): SandboxGroup | undefined {
    const groupId = this.byInvite.get(code);
    return groupId === undefined ? undefined : this.groups.get(groupId);
  }

  leave(group: SandboxGroup, number: string): void {
    group.members.delete(number);
    this.onChange?.();
  }
}

export function metadataOf(group: SandboxGroup): GroupMetadata {
  return {
    groupId: group.groupId,
    subject: group.subject,
    ...(group.description ? { description: group.description } : {}),
    announce: group.announce,
    locked: group.locked,
    ephemeral: group.ephemeral ?? 0,
    joinApproval: group.joinApproval === true,
    membersCanAdd: group.membersCanAdd === true,
    participants: [...group.members].map(([number, role]) => ({ number, role })),
  };
}

export const sandboxPictureUrl = (group: SandboxGroup): string | null =>
  group.picture === undefined
    ? null
    : `https://sandbox.invalid/groups/${group.groupId.replace('@g.us', '')}/${group.picture.slice(0, 16)}.jpg`;
