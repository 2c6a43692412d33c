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
import { digitsOfLid, jidOfPhone, phoneOfJid } from './jid.js';

/** The group methods of a Baileys socket (makeWASocket has them all). */
export type BaileysGroupSocket = Required<
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
      }),
    participants: (groupId, action, numbers) =>
      run(`${action} in ${groupId}`, groupId, async () => {
        const answers = await socket.groupParticipantsUpdate(groupId, numbers.map(jidOfPhone), action);
        return numbers.map((number, i) => {
          const answer = answers.find((a) => phoneOfJid(a.jid) === number) ?? answers[i];
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

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined || value === null || value === '') throw new EngineError('engine_error', what);
  return value;
}
