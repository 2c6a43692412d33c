/**
 * Groups through Baileys: the engine port's GroupOperations mapped onto groupCreate, groupMetadata,
 * groupParticipantsUpdate, groupUpdateSubject / …Description, groupSettingUpdate, groupInviteCode,
 * groupRevokeInvite, groupAcceptInvite, groupLeave and groupFetchAllParticipating; and Baileys' group
 * events (groups.upsert, groups.update, group-participants.update) as the port's GroupReports.
 *
 * Participants are named by phone digits where WhatsApp tells them (the JID, or `phoneNumber` in LID
 * addressed groups), else `<digits>@lid`, never a LID's digits as if they were a number.
 */
import type {
  BaileysEventMap,
  GroupMetadata as WAGroupMetadata,
  GroupParticipant as WAGroupParticipant,
} from 'baileys';
import {
  EngineError,
  type GroupMetadata,
  type GroupOperations,
  type GroupReport,
  type GroupSettingsChange,
  type ParticipantAction,
  type ParticipantResult,
} from '../engine.js';
import type { BaileysSocket } from './baileys-socket.js';
import { statusCodeOf } from './disconnect-kind.js';
import { digitsOfLid, isLidUser, jidOfPhone, phoneOfJid } from './jid.js';

/** The group methods of a Baileys socket (makeWASocket has them all; the Part 3 extras are optional here). */
export type BaileysGroupSocket = Pick<
  BaileysSocket,
  | 'groupToggleEphemeral'
  | 'groupJoinApprovalMode'
  | 'groupMemberAddMode'
  | 'groupRequestParticipantsList'
  | 'groupRequestParticipantsUpdate'
  | 'updateProfilePicture'
  | 'removeProfilePicture'
  | 'profilePictureUrl'
  | 'signalRepository'
> &
  Required<
    Pick<
      BaileysSocket,
      | 'groupCreate'
      | 'groupMetadata'
      | 'groupParticipantsUpdate'
      | 'groupUpdateSubject'
      | 'groupUpdateDescription'
      | 'groupSettingUpdate'
      | 'groupInviteCode'
      | 'groupRevokeInvite'
      | 'groupAcceptInvite'
      | 'groupLeave'
      | 'groupFetchAllParticipating'
    >
  >;

/** A participant's (or author's) id in the gateway's words. */
export function memberOf(jid: string | null | undefined, phoneNumber?: string | null): string | undefined {
  const phone = phoneOfJid(jid) ?? phoneOfJid(phoneNumber);
  if (phone) return phone;
  const lid = digitsOfLid(jid);
  return lid === undefined ? undefined : `${lid}@lid`;
}

const participantOf = (p: WAGroupParticipant) => memberOf(p.id, p.phoneNumber);

export function groupMetadataOf(group: WAGroupMetadata): GroupMetadata {
  const participants = group.participants.flatMap((p) => {
    const number = participantOf(p);
    if (!number) return [];
    const role =
      p.admin === 'superadmin' || p.isSuperAdmin ? 'superadmin' : p.admin === 'admin' || p.isAdmin ? 'admin' : 'member';
    return [{ number, role } as const];
  });
  return {
    groupId: group.id,
    subject: group.subject ?? '',
    ...(group.desc ? { description: group.desc } : {}),
    announce: group.announce === true,
    locked: group.restrict === true,
    ephemeral: group.ephemeralDuration ?? 0,
    joinApproval: group.joinApprovalMode === true,
    membersCanAdd: group.memberAddMode === true,
    participants,
  };
}

/** Baileys' `groups.update` entries as reports of changed settings. */
export function reportsOfGroupUpdates(updates: BaileysEventMap['groups.update']): GroupReport[] {
  return updates.flatMap((update) => {
    if (!update.id) return [];
    const change: GroupSettingsChange = {};
    if (update.subject !== undefined) change.subject = update.subject;
    if (update.desc !== undefined) change.description = update.desc ?? '';
    if (update.announce !== undefined) change.announce = update.announce === true;
    if (update.restrict !== undefined) change.locked = update.restrict === true;
    if (update.ephemeralDuration !== undefined) change.ephemeral = update.ephemeralDuration ?? 0;
    if (update.joinApprovalMode !== undefined) change.joinApproval = update.joinApprovalMode === true;
    if (update.memberAddMode !== undefined) change.membersCanAdd = update.memberAddMode === true;
    if (Object.keys(change).length === 0) return [];
    const by = memberOf(update.author, update.authorPn);
    return [{ kind: 'updated' as const, groupId: update.id, change, ...(by ? { by } : {}) }];
  });
}

const ACTIONS: ReadonlySet<string> = new Set(['add', 'remove', 'promote', 'demote']);

export function reportOfParticipantsUpdate(
  update: BaileysEventMap['group-participants.update'],
): GroupReport | undefined {
  if (!ACTIONS.has(update.action)) return undefined; // 'modify' (a number changed): nothing to report
  const participants = update.participants
    .map((p) => (typeof p === 'string' ? memberOf(p) : participantOf(p)))
    .filter((n): n is string => !!n);
  if (participants.length === 0) return undefined;
  const by = memberOf(update.author, update.authorPn);
  return {
    kind: 'participants',
    groupId: update.id,
    action: update.action as ParticipantAction,
    participants,
    ...(by ? { by } : {}),
  };
}

/** Baileys' `group.join-request` (someone asked to join, or withdrew) as a report; `rejected` is an admin's answer, not reported. */
export function reportOfJoinRequest(update: BaileysEventMap['group.join-request']): GroupReport | undefined {
  if (update.action !== 'created' && update.action !== 'revoked') return undefined;
  const number = memberOf(update.participant, update.participantPn);
  if (!number) return undefined;
  return { kind: 'join_request', groupId: update.id, number, action: update.action };
}

/** `chats.update` entries of groups whose disappearing-message timer changed (an EPHEMERAL_SETTING protocol message). */
export function reportsOfEphemeralChanges(updates: BaileysEventMap['chats.update']): GroupReport[] {
  return updates.flatMap((update) => {
    if (!update.id?.endsWith('@g.us') || update.ephemeralExpiration === undefined) return [];
    return [{ kind: 'updated' as const, groupId: update.id, change: { ephemeral: update.ephemeralExpiration ?? 0 } }];
  });
}

/** The status of one answer to a join request. */
function requestStatusOf(code: string): ParticipantResult['status'] {
  if (code === '200') return 'ok';
  if (code === '404') return 'not_found';
  return 'not_allowed';
}

/** WhatsApp's answer per participant → the gateway's status. */
function statusOf(code: string, action: ParticipantAction): ParticipantResult['status'] {
  switch (code) {
    case '200':
      return 'ok';
    case '404':
      return action === 'add' ? 'not_found' : 'not_in_group';
    case '409':
      return action === 'add' ? 'already_in_group' : 'ok';
    default:
      // 403 (privacy settings, or the creator), 408 (left recently), 401…
      return 'not_allowed';
  }
}

/** WhatsApp's refusal code of a failed IQ (Boom `data`), or the Boom status code. */
function refusalOf(error: unknown): number | undefined {
  const data = (error as { data?: unknown } | null)?.data;
  return typeof data === 'number' ? data : statusCodeOf(error);
}

function groupError(error: unknown, doing: string, groupId?: string): EngineError {
  if (error instanceof EngineError) return error;
  const message = `${doing}: ${(error as Error)?.message ?? String(error)}`;
  switch (refusalOf(error)) {
    case 401:
    case 403:
      return new EngineError(
        'not_group_admin',
        groupId ? `the account is not an admin of the group ${groupId}` : message,
        true,
      );
    case 404:
    case 406:
      return new EngineError('group_not_found', groupId ? `the account is not in the group ${groupId}` : message, true);
    case 428:
    case 408:
      return new EngineError('not_connected', message);
    default:
      return new EngineError('engine_error', message);
  }
}

export function baileysGroupOperations(socket: BaileysGroupSocket, requireOnline: () => void): GroupOperations {
  const run = async <T>(doing: string, groupId: string | undefined, call: () => Promise<T>): Promise<T> => {
    requireOnline();
    try {
      return await call();
    } catch (error) {
      throw groupError(error, doing, groupId);
    }
  };
  return {
    list: () =>
      run('fetching the groups', undefined, async () =>
        Object.values(await socket.groupFetchAllParticipating()).map(groupMetadataOf),
      ),
    metadata: (groupId) =>
      run(`reading ${groupId}`, groupId, async () => groupMetadataOf(await socket.groupMetadata(groupId))),
    create: (subject, numbers) =>
      run('creating a group', undefined, async () => {
        const group = groupMetadataOf(await socket.groupCreate(subject, numbers.map(jidOfPhone)));
        const added = new Set(group.participants.map((p) => p.number));
        return {
          group,
          failed: numbers.filter((n) => !added.has(n)).map((number) => ({ number, reason: 'not_added' })),
        };
      }),
    update: (groupId, change) =>
      run(`changing ${groupId}`, groupId, async () => {
        if (change.subject !== undefined) await socket.groupUpdateSubject(groupId, change.subject);
        if (change.description !== undefined)
          await socket.groupUpdateDescription(groupId, change.description === '' ? undefined : change.description);
        if (change.announce !== undefined)
          await socket.groupSettingUpdate(groupId, change.announce ? 'announcement' : 'not_announcement');
        if (change.locked !== undefined)
          await socket.groupSettingUpdate(groupId, change.locked ? 'locked' : 'unlocked');
        if (change.ephemeral !== undefined)
          await need(socket.groupToggleEphemeral, 'groupToggleEphemeral').call(socket, groupId, change.ephemeral);
        if (change.joinApproval !== undefined)
          await need(socket.groupJoinApprovalMode, 'groupJoinApprovalMode').call(
            socket,
            groupId,
            change.joinApproval ? 'on' : 'off',
          );
        if (change.membersCanAdd !== undefined)
          await need(socket.groupMemberAddMode, 'groupMemberAddMode').call(
            socket,
            groupId,
            change.membersCanAdd ? 'all_member_add' : 'admin_add',
          );
      }),
    pictureUrl: (groupId) =>
      run(`reading the picture of ${groupId}`, groupId, async () => {
        try {
          return (await socket.profilePictureUrl(groupId, 'image')) ?? null;
        } catch (error) {
          // WhatsApp answers 404 (no picture) or 401 (not visible) for a group without one.
          const code = refusalOf(error);
          if (code === 404 || code === 401) return null;
          throw error;
        }
      }),
    setPicture: (groupId, image) =>
      run(`setting the picture of ${groupId}`, groupId, () =>
        need(socket.updateProfilePicture, 'updateProfilePicture').call(socket, groupId, image),
      ),
    removePicture: (groupId) =>
      run(`removing the picture of ${groupId}`, groupId, () =>
        need(socket.removeProfilePicture, 'removeProfilePicture').call(socket, groupId),
      ),
    joinRequests: (groupId) =>
      run(`reading the join requests of ${groupId}`, groupId, async () => {
        const list = await need(socket.groupRequestParticipantsList, 'groupRequestParticipantsList').call(
          socket,
          groupId,
        );
        return list.flatMap((request) => {
          const number = memberOf(request.jid, request.phone_number);
          if (!number) return [];
          const seconds = Number(request.request_time);
          const requestedAt = new Date(Number.isFinite(seconds) ? seconds * 1000 : 0).toISOString();
          return [{ number, requestedAt }];
        });
      }),
    answerJoinRequests: (groupId, action, numbers) =>
      run(`${action} join requests of ${groupId}`, groupId, async () => {
        const update = need(socket.groupRequestParticipantsUpdate, 'groupRequestParticipantsUpdate');
        const answers = await answeredNumbers(
          socket,
          await update.call(socket, groupId, numbers.map(jidOfPhone), action),
        );
        return numbers.map((number) => {
          const answer = answers.get(number);
          return { number, status: answer ? requestStatusOf(String(answer.status)) : 'not_allowed' };
        });
      }),
    participants: (groupId, action, numbers) =>
      run(`${action} in ${groupId}`, groupId, async () => {
        const answers = await answeredNumbers(
          socket,
          await socket.groupParticipantsUpdate(groupId, numbers.map(jidOfPhone), action),
        );
        return numbers.map((number) => {
          const answer = answers.get(number);
          return { number, status: answer ? statusOf(String(answer.status), action) : 'not_allowed' };
        });
      }),
    inviteCode: (groupId) =>
      run(`reading the invite of ${groupId}`, groupId, async () =>
        required(await socket.groupInviteCode(groupId), 'no invite code came back'),
      ),
    revokeInvite: (groupId) =>
      run(`revoking the invite of ${groupId}`, groupId, async () =>
        required(await socket.groupRevokeInvite(groupId), 'no new invite code came back'),
      ),
    join: async (code) => {
      const bare = code.replace(/^(https?:\/\/)?chat\.whatsapp\.com\//i, '');
      try {
        return await run('joining by invite', undefined, async () =>
          required(await socket.groupAcceptInvite(bare), 'no group id came back'),
        );
      } catch (error) {
        if (error instanceof EngineError && (error.code === 'group_not_found' || error.code === 'not_group_admin')) {
          throw new EngineError(
            'invalid_invite_code',
            'no group has this invite code (it may have been revoked)',
            true,
          );
        }
        throw error;
      }
    },
    leave: (groupId) => run(`leaving ${groupId}`, groupId, () => socket.groupLeave(groupId)),
  };
}

function need<T>(method: T | undefined, name: string): T {
  if (!method) throw new EngineError('engine_error', `this Baileys socket has no ${name}`);
  return method;
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined || value === null || value === '') throw new EngineError('engine_error', what);
  return value;
}

/**
 * WhatsApp's answers to a participants or join-request update, by the number each names: a LID is mapped to its
 * number where the account knows it. WhatsApp need not answer in the order asked, so an answer is never matched by
 * its place in the list: a number no answer names is `not_allowed`, not another number's answer.
 */
async function answeredNumbers<A extends { jid?: string | null }>(
  socket: Pick<BaileysSocket, 'signalRepository'>,
  answers: readonly A[],
): Promise<Map<string, A>> {
  const byNumber = new Map<string, A>();
  for (const answer of answers) {
    const jid = answer.jid ?? undefined;
    const number =
      phoneOfJid(jid) ??
      (jid && isLidUser(jid)
        ? phoneOfJid(await socket.signalRepository.lidMapping.getPNForLID(jid).catch(() => null))
        : undefined);
    if (number !== undefined) byNumber.set(number, answer);
  }
  return byNumber;
}
