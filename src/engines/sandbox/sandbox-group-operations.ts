/**
 * A sandbox device's group operations (the engine port's GroupOperations) on the simulated network: the
 * change is made on the network's groups, then told to the other members' online devices as WhatsApp
 * tells them (`metadata` to those added, `updated` / `participants` to the others).
 */
import type { GroupOperations, GroupSettingsChange, ParticipantAction } from '../engine.js';
import { EngineError } from '../engine.js';
import type { SandboxConnection } from './sandbox-connection.js';
import { createHash } from 'node:crypto';
import { metadataOf, sandboxPictureUrl } from './sandbox-groups.js';
import type { SandboxNetwork } from './sandbox-network.js';
import { numberExists } from './sandbox-numbers.js';

const adminsOf = (group: { members: Map<string, string> }): string[] =>
  [...group.members].filter(([, role]) => role !== 'member').map(([number]) => number);

/** `https://chat.whatsapp.com/<code>` or the code alone. */
export const inviteCodeOf = (codeOrLink: string): string =>
  codeOrLink.replace(/^https?:\/\/chat\.whatsapp\.com\//i, '').replace(/[/?#].*$/, '');

export function sandboxGroupOperations(
  connection: SandboxConnection,
  network: SandboxNetwork,
  me: () => string,
): GroupOperations {
  const groups = network.groups;
  return {
    async list() {
      return groups.of(me()).map(metadataOf);
    },
    async metadata(groupId) {
      return metadataOf(groups.memberOf(groupId, me()));
    },
    async create(subject, participants) {
      const creator = me();
      const others = [...new Set(participants)].filter((number) => number !== creator);
      const failed = others
        .filter((number) => !numberExists(number))
        .map((number) => ({ number, reason: 'not_found' }));
      const group = groups.create(subject, [creator, ...others.filter(numberExists)]);
      const metadata = metadataOf(group);
      network.groupReport(connection, group.members.keys(), { kind: 'metadata', group: metadata });
      return { group: metadata, failed };
    },
    async update(groupId, change: GroupSettingsChange) {
      const by = me();
      const group = groups.adminOf(groupId, by);
      groups.update(group, change);
      network.groupReport(connection, group.members.keys(), { kind: 'updated', groupId, change, by });
    },
    async participants(groupId, action: ParticipantAction, numbers) {
      const by = me();
      const group = groups.adminOf(groupId, by);
      const before = new Set(group.members.keys());
      const results = groups.participants(group, action, numbers);
      const changed = results.filter((r) => r.status === 'ok').map((r) => r.number);
      if (changed.length > 0) {
        // Those added learn of the whole group; everyone who was in it hears of the change (the removed too).
        if (action === 'add') network.groupReport(connection, changed, { kind: 'metadata', group: metadataOf(group) });
        network.groupReport(connection, before, { kind: 'participants', groupId, action, participants: changed, by });
      }
      return results;
    },
    async inviteCode(groupId) {
      return groups.adminOf(groupId, me()).inviteCode;
    },
    async revokeInvite(groupId) {
      return groups.revokeInvite(groups.adminOf(groupId, me()));
    },
    async join(code) {
      const group = groups.byInviteCode(inviteCodeOf(code));
      if (!group)
        throw new EngineError('invalid_invite_code', 'no group has this invite code (it may have been revoked)', true);
      const number = me();
      if (!group.members.has(number) && group.joinApproval === true) {
        // An admin has to let the number in: a request, told to the admins' devices.
        if (groups.request(group, number, Math.floor(Date.now() / 1000)))
          network.groupReport(connection, adminsOf(group), {
            kind: 'join_request',
            groupId: group.groupId,
            number,
            action: 'created',
          });
        return { groupId: group.groupId, requested: true };
      }
      if (!group.members.has(number)) {
        const before = [...group.members.keys()];
        groups.join(group, number);
        network.groupReport(connection, before, {
          kind: 'participants',
          groupId: group.groupId,
          action: 'add',
          participants: [number],
          by: number,
        });
      }
      return group.groupId;
    },
    async pictureUrl(groupId) {
      return sandboxPictureUrl(groups.memberOf(groupId, me()));
    },
    async setPicture(groupId, image) {
      const by = me();
      const group = groups.adminOf(groupId, by);
      groups.setPicture(group, createHash('sha256').update(image).digest('hex'));
      network.groupReport(connection, group.members.keys(), { kind: 'picture', groupId, removed: false, by });
    },
    async removePicture(groupId) {
      const by = me();
      const group = groups.adminOf(groupId, by);
      groups.setPicture(group, undefined);
      network.groupReport(connection, group.members.keys(), { kind: 'picture', groupId, removed: true, by });
    },
    async joinRequests(groupId) {
      const group = groups.adminOf(groupId, me());
      return [...(group.requests ?? [])].map(([number, at]) => ({
        number,
        requestedAt: new Date(at * 1000).toISOString(),
      }));
    },
    async answerJoinRequests(groupId, action, numbers) {
      const by = me();
      const group = groups.adminOf(groupId, by);
      const before = [...group.members.keys()];
      const results = groups.answerRequests(group, action === 'approve', numbers);
      const answered = results.filter((r) => r.status === 'ok').map((r) => r.number);
      if (action === 'approve' && answered.length > 0) {
        network.groupReport(connection, answered, { kind: 'metadata', group: metadataOf(group) });
        network.groupReport(connection, before, {
          kind: 'participants',
          groupId,
          action: 'add',
          participants: answered,
          by,
        });
      }
      return results;
    },
    async leave(groupId) {
      const number = me();
      const group = groups.memberOf(groupId, number);
      groups.leave(group, number);
      network.groupReport(connection, group.members.keys(), {
        kind: 'participants',
        groupId,
        action: 'remove',
        participants: [number],
        by: number,
      });
    },
  };
}
