/**
 * The groups of a device's account (the /groups routes and the network's reports), all through the one
 * writer of `groups-<deviceId>`. A change this device makes is checked against the stream's state, made on
 * the network, then recorded before the answer (the network assigns what the event records); a crash in
 * between is repaired by the refresh at every `online`. Changes made elsewhere arrive as engine reports;
 * reads come from the groups read model, never from the network.
 */
import type { Logger } from 'pino';
import { CommandHandler } from '../commands/command-handler.js';
import { DomainError, sessionNotOnline } from '../errors/domain-error.js';
import { type EngineRefusals, engineSupports, translatingEngineFailures } from '../engines/engine-failure.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import {
  type GroupEvent,
  type GroupMetadata,
  type GroupReport,
  type GroupSettingsChange,
  type ParticipantAction,
  groupsStream,
} from './group-events.js';
import type { GroupOperations, JoinRequest, JoinRequestAnswer, ParticipantResult } from './group-operations.js';
import { type GroupsCommand, type GroupsState, groupsDecider, requireAdmin, requireGroup } from './groups-decider.js';
import type { GroupDetail, GroupSummary, GroupsReadModel } from './groups-read-model.js';

export interface GroupCommandsDeps {
  store: EventStore;
  groups: GroupsReadModel;
  projections: ReadModelProgress;
  /** The live connection's group operations, while the session is online. */
  operations(deviceId: string): GroupOperations | undefined;
  /** The account's number, while the session is online. */
  me(deviceId: string): string | undefined;
  /** The session's state as this process knows it, for the words of a refusal. */
  sessionState?(deviceId: string): string | undefined;
  log?: Logger;
}

/** Groups recorded per append when the network's list is refreshed (one event each). */
const REFRESH_CHUNK = 50;
const SNAPSHOT_EVERY = 200;

export class GroupCommands {
  private readonly handler: CommandHandler<GroupsState, GroupsCommand, GroupEvent>;

  constructor(private readonly deps: GroupCommandsDeps) {
    this.handler = new CommandHandler({
      store: deps.store,
      decider: groupsDecider,
      cacheSize: 1_000,
      snapshots: { every: SNAPSHOT_EVERY },
    });
  }

  async list(deviceId: string): Promise<GroupSummary[]> {
    const { me } = this.online(deviceId);
    return this.deps.groups.list(deviceId, me);
  }

  async get(deviceId: string, groupId: string): Promise<GroupDetail> {
    const { me } = this.online(deviceId);
    const group = this.deps.groups.get(deviceId, groupId, me);
    if (!group) throw notInGroup(groupId);
    return group;
  }

  async create(
    deviceId: string,
    subject: string,
    participants: readonly string[],
  ): Promise<GroupDetail & { failed: Array<{ number: string; reason: string }> }> {
    const { operations, me } = this.online(deviceId);
    const created = await operations.create(subject, participants);
    await this.record(deviceId, { type: 'RecordGroups', deviceId, groups: [created.group], reason: 'created' });
    const group = this.deps.groups.get(deviceId, created.group.groupId, me) ?? detailOf(created.group, me);
    return { ...group, failed: created.failed };
  }

  async update(deviceId: string, groupId: string, change: GroupSettingsChange): Promise<GroupDetail> {
    const { operations, me } = this.online(deviceId);
    requireAdmin(await this.state(deviceId), groupId, me);
    await operations.update(groupId, change);
    await this.record(deviceId, { type: 'RecordUpdate', deviceId, groupId, change, by: me });
    return await this.get(deviceId, groupId);
  }

  async participants(
    deviceId: string,
    groupId: string,
    action: ParticipantAction,
    numbers: readonly string[],
  ): Promise<ParticipantResult[]> {
    const { operations, me } = this.online(deviceId);
    requireAdmin(await this.state(deviceId), groupId, me);
    const results = await operations.participants(groupId, action, numbers);
    const changed = results.filter((r) => r.status === 'ok').map((r) => r.number);
    if (changed.length > 0)
      await this.record(deviceId, {
        type: 'RecordParticipants',
        deviceId,
        groupId,
        action,
        participants: changed,
        by: me,
        me,
      });
    return results;
  }

  async inviteCode(deviceId: string, groupId: string): Promise<string> {
    const { operations, me } = this.online(deviceId);
    requireAdmin(await this.state(deviceId), groupId, me);
    return operations.inviteCode(groupId);
  }

  async revokeInvite(deviceId: string, groupId: string): Promise<string> {
    const { operations, me } = this.online(deviceId);
    requireAdmin(await this.state(deviceId), groupId, me);
    const code = await operations.revokeInvite(groupId);
    await this.record(deviceId, { type: 'RecordInviteRevoked', deviceId, groupId });
    return code;
  }

  /** Joins by code; a group that needs approval gets a join request instead (`requested: true`). */
  async join(deviceId: string, code: string): Promise<{ groupId: string; requested?: true }> {
    const { operations } = this.online(deviceId);
    const joined = await operations.join(code);
    if (typeof joined !== 'string') return { groupId: joined.groupId, requested: true };
    const group = await operations.metadata(joined);
    await this.record(deviceId, { type: 'RecordGroups', deviceId, groups: [group], reason: 'joined' });
    return { groupId: joined };
  }

  /** The picture's URL (from the network), null when the group has none. */
  async pictureUrl(deviceId: string, groupId: string): Promise<string | null> {
    const { operations } = this.online(deviceId);
    requireGroup(await this.state(deviceId), groupId);
    return await engineSupports(operations.pictureUrl?.bind(operations), 'group pictures')(groupId);
  }

  /**
   * Sets (JPEG or PNG bytes, as base64: arguments may travel to the device's owner as JSON) or removes (null) the
   * picture: admins only; recorded before the answer.
   */
  async setPicture(deviceId: string, groupId: string, imageBase64: string | null): Promise<void> {
    const { operations, me } = this.online(deviceId);
    requireAdmin(await this.state(deviceId), groupId, me);
    if (imageBase64 === null)
      await engineSupports(operations.removePicture?.bind(operations), 'group pictures')(groupId);
    else
      await engineSupports(operations.setPicture?.bind(operations), 'group pictures')(
        groupId,
        Buffer.from(imageBase64, 'base64'),
      );
    await this.record(deviceId, { type: 'RecordPicture', deviceId, groupId, removed: imageBase64 === null, by: me });
  }

  /** Pending requests to join (admins only). */
  async joinRequests(deviceId: string, groupId: string): Promise<JoinRequest[]> {
    const { operations, me } = this.online(deviceId);
    requireAdmin(await this.state(deviceId), groupId, me);
    return await engineSupports(operations.joinRequests?.bind(operations), 'join requests')(groupId);
  }

  /** Approves or rejects requests (admins only); those approved are recorded as added, those rejected as closed. */
  async answerJoinRequests(
    deviceId: string,
    groupId: string,
    action: JoinRequestAnswer,
    numbers: readonly string[],
  ): Promise<ParticipantResult[]> {
    const { operations, me } = this.online(deviceId);
    requireAdmin(await this.state(deviceId), groupId, me);
    const answer = engineSupports(operations.answerJoinRequests?.bind(operations), 'join requests');
    const results = await answer(groupId, action, numbers);
    const answered = results.filter((r) => r.status === 'ok').map((r) => r.number);
    // A rejected request is closed on the stream too, else the same number asking again would be no news.
    if (action === 'reject' && answered.length > 0)
      await this.record(deviceId, { type: 'RecordJoinRequestsRejected', deviceId, groupId, numbers: answered });
    if (action === 'approve' && answered.length > 0)
      await this.record(deviceId, {
        type: 'RecordParticipants',
        deviceId,
        groupId,
        action: 'add',
        participants: answered,
        by: me,
        me,
      });
    return results;
  }

  async leave(deviceId: string, groupId: string): Promise<void> {
    const { operations } = this.online(deviceId);
    requireGroup(await this.state(deviceId), groupId);
    await operations.leave(groupId);
    await this.record(deviceId, { type: 'RecordLeft', deviceId, groupId, reason: 'left' });
  }

  /** A change made elsewhere, as the engine reported it (the device actor's group reports). */
  async report(deviceId: string, report: GroupReport): Promise<void> {
    switch (report.kind) {
      case 'updated':
        await this.handler.handle(groupsStream(deviceId), {
          type: 'RecordUpdate',
          deviceId,
          groupId: report.groupId,
          change: report.change,
          ...(report.by ? { by: report.by } : {}),
        });
        return;
      case 'participants': {
        const me = this.deps.me(deviceId);
        const { groupId, action, participants, by } = report;
        await this.handler.handle(groupsStream(deviceId), {
          type: 'RecordParticipants',
          deviceId,
          groupId,
          action,
          participants,
          ...(by ? { by } : {}),
          ...(me ? { me } : {}),
        });
        return;
      }
      case 'metadata':
        await this.handler.handle(groupsStream(deviceId), {
          type: 'RecordGroups',
          deviceId,
          groups: [report.group],
          reason: 'reported',
        });
        return;
      case 'picture':
        await this.handler.handle(groupsStream(deviceId), {
          type: 'RecordPicture',
          deviceId,
          groupId: report.groupId,
          removed: report.removed,
          ...(report.by ? { by: report.by } : {}),
        });
        return;
      case 'join_request':
        await this.handler.handle(groupsStream(deviceId), {
          type: 'RecordJoinRequest',
          deviceId,
          groupId: report.groupId,
          number: report.number,
          action: report.action,
        });
        return;
    }
  }

  /** Records the network's list of groups (each time the session comes online): what changed, and the groups left meanwhile. */
  async refresh(deviceId: string): Promise<void> {
    const operations = this.deps.operations(deviceId);
    if (!operations) return;
    const stream = groupsStream(deviceId);
    // Changes recorded while the list is on its way are newer than it (see the decider's `listedAt`).
    const listedAt = (await this.handler.load(stream)).state.seq;
    const groups = await operations.list();
    for (let i = 0; i < groups.length; i += REFRESH_CHUNK) {
      await this.handler.handle(stream, {
        type: 'RecordGroups',
        deviceId,
        groups: groups.slice(i, i + REFRESH_CHUNK),
        reason: 'refreshed',
        listedAt,
      });
    }
    const last = await this.handler.handle(stream, { type: 'SyncGroups', deviceId, groups, listedAt });
    if (last.position > 0) await this.deps.projections.settle(last.position);
  }

  private async state(deviceId: string): Promise<GroupsState> {
    return (await this.handler.load(groupsStream(deviceId))).state;
  }

  /** Appends through the decider and waits until the read model has it (read your writes). */
  private async record(deviceId: string, command: GroupsCommand): Promise<void> {
    const handled = await this.handler.handle(groupsStream(deviceId), command);
    if (handled.position > 0) await this.deps.projections.settle(handled.position);
  }

  private online(deviceId: string): { operations: GroupOperations; me: string } {
    const operations = this.deps.operations(deviceId);
    const me = this.deps.me(deviceId);
    const sessionState = () => this.deps.sessionState?.(deviceId);
    if (!operations || me === undefined) throw sessionNotOnline(sessionState());
    return { operations: translatingEngineFailures(operations, sessionState, GROUP_REFUSALS), me };
  }
}

/** What the network's refusals of a group change mean here. */
const GROUP_REFUSALS: EngineRefusals = {
  group_not_found: 'not_found',
  invalid_invite_code: 'not_found',
  not_group_admin: 'not_group_admin',
};

/** An operation the engine may lack: without it, the network cannot do it (`engine_error`). */
const notInGroup = (groupId: string) => new DomainError('not_found', `the account is not in the group ${groupId}`);

function detailOf(group: GroupMetadata, me: string): GroupDetail {
  const role = group.participants.find((p) => p.number === me)?.role;
  return {
    groupId: group.groupId,
    subject: group.subject,
    ...(group.description ? { description: group.description } : {}),
    size: group.participants.length,
    isAdmin: role === 'admin' || role === 'superadmin',
    announce: group.announce,
    locked: group.locked,
    ephemeral: group.ephemeral ?? 0,
    joinApproval: group.joinApproval === true,
    membersCanAdd: group.membersCanAdd === true,
    participants: group.participants,
  };
}
