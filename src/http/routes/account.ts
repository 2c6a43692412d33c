/**
 * The account's profile (GET/PATCH /profile), other numbers' about texts, and blocking
 * (PUT/DELETE /contacts/:number/block, GET /contacts/blocked).
 */
import type { AccountCommands } from '../../account/account-commands.js';
import type { ContactLookups } from '../../contacts/contact-lookups.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  AboutSchema,
  BlockedListSchema,
  BlockedSchema,
  ContactParams,
  PatchProfileBody,
  ProfileSchema,
} from '../schemas/contacts.js';
import { LOOKUPS_RATE_LIMITED, NOT_ONLINE } from './responses.js';

const NO_DEVICE = { description: 'No such device.' };
const ENGINE_FAILED = { description: 'The network did not answer (`engine_error`); nothing was recorded, try again.' };

export function accountRoutes({
  account,
  lookups,
}: {
  /** With several processes, all but `blocked` are served by the device's owner (src/cluster/owner-calls.ts). */
  account: Pick<AccountCommands, 'profile' | 'changeProfile' | 'block' | 'blocked'>;
  lookups: Pick<ContactLookups, 'about'>;
}): RouteSpec[] {
  const block = (blocked: boolean) =>
    defineRoute({
      method: blocked ? 'put' : 'delete',
      path: '/devices/:deviceId/contacts/:number/block',
      operationId: blocked ? 'blockContact' : 'unblockContact',
      tag: 'Contacts',
      summary: blocked ? 'Block a number' : 'Unblock a number',
      description: `${blocked ? 'The number can no longer write to or call the account' : 'The number can write to and call the account again'}. Needs an online session; recorded before the answer; idempotent.`,
      access: 'device',
      scope: 'manage',
      params: ContactParams,
      responses: {
        200: { description: 'Done.', schema: BlockedSchema },
        404: NO_DEVICE,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        await account.block(params.deviceId, params.number, blocked);
        return { status: 200, body: { blocked } };
      },
    });

  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/profile',
      operationId: 'getProfile',
      tag: 'Contacts',
      summary: "The account's profile",
      description: 'Its number, name, about text and picture, as the network has them. Needs an online session.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: 'The profile.', schema: ProfileSchema },
        404: NO_DEVICE,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        return { status: 200, body: await account.profile(params.deviceId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/devices/:deviceId/profile',
      operationId: 'updateProfile',
      tag: 'Contacts',
      summary: "Change the account's name or about text",
      description:
        "Made on the network, recorded in the device's history (ProfileChanged) before the answer. Needs an online session.",
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: PatchProfileBody,
      responses: {
        200: { description: 'The profile after the change.', schema: ProfileSchema },
        404: NO_DEVICE,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return { status: 200, body: await account.changeProfile(params.deviceId, body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/contacts/:number/about',
      operationId: 'getContactAbout',
      tag: 'Contacts',
      summary: 'The about text of a number',
      description:
        'Needs an online session. Cached and rate-limited like number checks (answers kept for CONTACT_AVATAR_CACHE_TTL; fresh lookups draw on the allowance of ' +
        'CONTACT_CHECK_RATE_PER_MINUTE, then `429 rate_limited` with `Retry-After`).',
      access: 'device',
      scope: 'read',
      params: ContactParams,
      responses: {
        200: { description: 'The answer.', schema: AboutSchema },
        404: NO_DEVICE,
        409: NOT_ONLINE,
        429: LOOKUPS_RATE_LIMITED,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        return { status: 200, body: await lookups.about(params.deviceId, params.number) };
      },
    }),
    block(true),
    block(false),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/contacts/blocked',
      operationId: 'listBlockedContacts',
      tag: 'Contacts',
      summary: 'The numbers the account blocks',
      description:
        "From the read model: what this device blocked, and the network's list as of the session's last `online`. Works in every session state.",
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: { 200: { description: 'The numbers, sorted.', schema: BlockedListSchema }, 404: NO_DEVICE },
      handler({ params }) {
        return { status: 200, body: { items: account.blocked(params.deviceId) } };
      },
    }),
  ];
}
