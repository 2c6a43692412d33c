/**
 * The /groups routes: the account's groups, read from the groups read model, changed through the
 * groups stream's writer (src/groups/group-commands.ts). All need an online session.
 */
import { readFile } from 'node:fs/promises';
import type { GroupCommands } from '../../groups/group-commands.js';
import { detectMimetype } from '../../media/media-type.js';
import type { BodyGate } from '../body/body-gate.js';
import { mediaBodyParser, uploadedMedia } from '../body/media-body-parser.js';
import { invalidRequest, unsupportedMediaType } from '../problem.js';
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
  JoinRequestsBody,
  JoinRequestsSchema,
  JoinedSchema,
  ParticipantResultsSchema,
  PictureBody,
  PictureSchema,
  ParticipantsBody,
  JoinResultsSchema,
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
  | 'list'
  | 'get'
  | 'create'
  | 'update'
  | 'participants'
  | 'inviteCode'
  | 'revokeInvite'
  | 'join'
  | 'leave'
  | 'pictureUrl'
  | 'setPicture'
  | 'joinRequests'
  | 'answerJoinRequests'
>;

/** How a picture body is read: like a media send's (JSON base64 or multipart), into DATA_DIR. */
export interface PictureUpload {
  bodyGate: BodyGate;
  uploadDir: string;
  /** Largest picture, in bytes. */
  limit: number;
}

/** A group picture larger than this is refused (WhatsApp scales it down to 640 px anyway). */
export const GROUP_PICTURE_MAX_BYTES = 5 * 1024 * 1024;

/** The group picture types WhatsApp takes. */
const PICTURE_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png']);

export function groupRoutes(groups: GroupRouteCommands, picture?: PictureUpload): RouteSpec[] {
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
        200: {
          description: 'Joined; or, for a group that needs approval, requested (`requested: true`).',
          schema: JoinedSchema,
        },
        404: { description: 'No such device, or no group has this code (`not_found`).' },
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return { status: 200, body: await groups.join(params.deviceId, body.code) };
      },
    }),
    ...(picture ? pictureRoutes(groups, picture) : []),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/groups/:groupId/requests',
      operationId: 'listGroupJoinRequests',
      tag,
      summary: 'Pending requests to join',
      description:
        'For a group with `joinApproval`: who asked to join (by link) and when. Needs the account to be an admin (`403 not_group_admin`).',
      access: 'device',
      scope: 'read',
      params: GroupParams,
      responses: {
        200: { description: 'The requests.', schema: JoinRequestsSchema },
        403: NOT_ADMIN,
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        return { status: 200, body: { items: await groups.joinRequests(params.deviceId, params.groupId) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/groups/:groupId/requests',
      operationId: 'answerGroupJoinRequests',
      tag,
      summary: 'Approve or reject requests to join',
      description:
        'One result per number: `ok`, or `not_found` (no pending request). Those approved become members (recorded, `group.participants` `add`). Needs the account to be an admin (`403 not_group_admin`).',
      access: 'device',
      scope: 'manage',
      params: GroupParams,
      body: JoinRequestsBody,
      responses: {
        200: { description: 'One result per number.', schema: JoinResultsSchema },
        403: NOT_ADMIN,
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return {
          status: 200,
          body: {
            results: await groups.answerJoinRequests(params.deviceId, params.groupId, body.action, body.participants),
          },
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

function pictureRoutes(groups: GroupRouteCommands, upload: PictureUpload): RouteSpec[] {
  const path = '/devices/:deviceId/groups/:groupId/picture';
  return [
    defineRoute({
      method: 'get',
      path,
      operationId: 'getGroupPicture',
      tag,
      summary: "The group's picture",
      description: "The picture's URL as the network gives it; `null` when the group has none.",
      access: 'device',
      scope: 'read',
      params: GroupParams,
      responses: {
        200: { description: 'The URL.', schema: PictureSchema },
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        return { status: 200, body: { url: await groups.pictureUrl(params.deviceId, params.groupId) } };
      },
    }),
    defineRoute({
      method: 'put',
      path,
      operationId: 'setGroupPicture',
      tag,
      summary: "Set the group's picture",
      description:
        `A JPEG or PNG (anything else \`415 unsupported_media_type\`), as \`base64\` in JSON or a multipart/form-data \`file\` part, at most ${upload.limit} bytes. ` +
        'Needs the account to be an admin (`403 not_group_admin`). Recorded before the answer.',
      access: 'device',
      scope: 'manage',
      params: GroupParams,
      body: PictureBody,
      bodyParser: {
        parse: mediaBodyParser({
          kind: 'image',
          limit: upload.limit,
          uploadDir: upload.uploadDir,
          schema: PictureBody,
          gate: upload.bodyGate,
          textDigest: false,
        }),
        multipart: true,
      },
      responses: {
        200: { description: 'Set.', schema: GroupIdSchema },
        403: NOT_ADMIN,
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        413: { description: `The image is larger than ${upload.limit} bytes (\`payload_too_large\`).` },
        415: { description: 'Not a JPEG or PNG (`unsupported_media_type`).' },
        502: ENGINE_FAILED,
      },
      async handler({ params, ctx }) {
        const file = uploadedMedia(ctx);
        if (!file)
          throw invalidRequest('body must have base64 or a file part', [
            { path: '/', message: 'must have base64 or a file part' },
          ]);
        const bytes = await readFile(file.path);
        const type = await detectMimetype(bytes);
        if (type === undefined || !PICTURE_TYPES.has(type))
          throw unsupportedMediaType(
            `a group picture must be a JPEG or PNG image, not ${type ?? 'unrecognised bytes'}`,
          );
        await groups.setPicture(params.deviceId, params.groupId, bytes.toString('base64'));
        return { status: 200, body: { groupId: params.groupId } };
      },
    }),
    defineRoute({
      method: 'delete',
      path,
      operationId: 'removeGroupPicture',
      tag,
      summary: "Remove the group's picture",
      description: 'Needs the account to be an admin (`403 not_group_admin`). Recorded before the answer.',
      access: 'device',
      scope: 'manage',
      params: GroupParams,
      responses: {
        200: { description: 'Removed.', schema: GroupIdSchema },
        403: NOT_ADMIN,
        404: NOT_IN_GROUP,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        await groups.setPicture(params.deviceId, params.groupId, null);
        return { status: 200, body: { groupId: params.groupId } };
      },
    }),
  ];
}
