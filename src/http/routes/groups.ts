/**
 * The /groups routes: the account's groups, read from the groups read model, changed through the
 * groups stream's writer (src/groups/group-commands.ts). All need an online session.
 */
import type { GroupCommands } from '../../groups/group-commands.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  CreateGroupBody,
  CreatedGroupSchema,
  GroupIdSchema,
  GroupListSchema,
  GroupParams,
  GroupSchema,
  InviteSchema,
  JoinGroupBody,
  ParticipantResultsSchema,
  ParticipantsBody,
  PatchGroupBody,
} from '../schemas/groups.js';
import { NOT_ONLINE } from './responses.js';

const tag = 'Groups';
const NOT_IN_GROUP = { description: 'No such device, or the account is not in the group (`not_found`).' };
const NOT_ADMIN = { description: 'The account is not an admin of the group (`not_group_admin`).' };
const ENGINE_FAILED = {
  description: 'The network did not carry out the change (`engine_error`); nothing was recorded, try again.',
};

export const inviteLink = (code: string) => `https://chat.whatsapp.com/${code}`;

/** The commands the routes use: with several processes, each served by the device's owner (src/cluster/owner-calls.ts). */
export type GroupRouteCommands = Pick<
  GroupCommands,
  'list' | 'get' | 'create' | 'update' | 'participants' | 'inviteCode' | 'revokeInvite' | 'join' | 'leave'
>;

export function groupRoutes(groups: GroupRouteCommands): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/groups',
      operationId: 'listGroups',
      tag,
      summary: 'List the groups the account is in',
      description:
        "From the gateway's read model of the groups (refreshed from the network each time the session comes online, and kept current by every change): one fast call however many groups.",
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: 'The groups, by id.', schema: GroupListSchema },
        404: { description: 'No such device.' },
        409: NOT_ONLINE,
      },
      async handler({ params }) {
        return { status: 200, body: { items: await groups.list(params.deviceId) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/groups',
      operationId: 'createGroup',
      tag,
      summary: 'Create a group',
      description:
        'The account creates the group (and is its `superadmin`) with the given participants; numbers the network could not add are listed in `failed`. Recorded before the answer.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: CreateGroupBody,
      responses: {
        201: { description: 'Created.', schema: CreatedGroupSchema },
        404: { description: 'No such device.' },
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return {
          status: 201,
          body: await groups.create(params.deviceId, body.subject, body.participants),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/groups/:groupId',
      operationId: 'getGroup',
      tag,
      summary: 'Read a group with its participants',
      access: 'device',
      scope: 'read',
      params: GroupParams,
      responses: { 200: { description: 'The group.', schema: GroupSchema }, 404: NOT_IN_GROUP, 409: NOT_ONLINE },
      async handler({ params }) {
        return { status: 200, body: await groups.get(params.deviceId, params.groupId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/devices/:deviceId/groups/:groupId',
      operationId: 'updateGroup',
      tag,
      summary: 'Change the subject, description or settings',
      description:
        'Needs the account to be an admin (`403 not_group_admin`). Every member gets a `group.updated` event.',
      access: 'device',
      scope: 'manage',
      params: GroupParams,
      body: PatchGroupBody,
      responses: {
        200: { description: 'The group after the change.', schema: GroupSchema },
        403: NOT_ADMIN,
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return {
          status: 200,
          body: await groups.update(params.deviceId, params.groupId, body),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/groups/:groupId/participants',
      operationId: 'changeGroupParticipants',
      tag,
      summary: 'Add, remove, promote or demote participants',
      description:
        'Needs the account to be an admin (`403 not_group_admin`). One result per number: `ok`, `not_found` (no account), `not_in_group`, `already_in_group`, `not_allowed` ' +
        '(e.g. the creator, or privacy settings). What changed is recorded and reaches the members as `group.participants`.',
      access: 'device',
      scope: 'manage',
      params: GroupParams,
      body: ParticipantsBody,
      responses: {
        200: { description: 'One result per number.', schema: ParticipantResultsSchema },
        403: NOT_ADMIN,
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return {
          status: 200,
          body: { results: await groups.participants(params.deviceId, params.groupId, body.action, body.participants) },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/groups/:groupId/invite',
      operationId: 'getGroupInvite',
      tag,
      summary: "The group's invite code and link",
      description: 'Needs the account to be an admin (`403 not_group_admin`).',
      access: 'device',
      scope: 'read',
      params: GroupParams,
      responses: {
        200: { description: 'The code.', schema: InviteSchema },
        403: NOT_ADMIN,
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        const code = await groups.inviteCode(params.deviceId, params.groupId);
        return { status: 200, body: { code, url: inviteLink(code) } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/groups/:groupId/invite',
      operationId: 'revokeGroupInvite',
      tag,
      summary: 'Revoke the invite code',
      description:
        'The old code and link stop working; answers the new ones. Needs the account to be an admin (`403 not_group_admin`).',
      access: 'device',
      scope: 'manage',
      params: GroupParams,
      responses: {
        200: { description: 'The new code.', schema: InviteSchema },
        403: NOT_ADMIN,
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        const code = await groups.revokeInvite(params.deviceId, params.groupId);
        return { status: 200, body: { code, url: inviteLink(code) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/groups/join',
      operationId: 'joinGroup',
      tag,
      summary: 'Join a group by invite code or link',
      description: 'An unknown or revoked code: `404 not_found`.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: JoinGroupBody,
      responses: {
        200: { description: 'Joined.', schema: GroupIdSchema },
        404: { description: 'No such device, or no group has this code (`not_found`).' },
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return {
          status: 200,
          body: { groupId: await groups.join(params.deviceId, body.code) },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/groups/:groupId/leave',
      operationId: 'leaveGroup',
      tag,
      summary: 'Leave a group',
      access: 'device',
      scope: 'manage',
      params: GroupParams,
      responses: {
        200: { description: 'Left.', schema: GroupIdSchema },
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        await groups.leave(params.deviceId, params.groupId);
        return { status: 200, body: { groupId: params.groupId } };
      },
    }),
  ];
}
