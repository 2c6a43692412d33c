/**
 * GET /devices/:deviceId/contacts, …/contacts/:number/check, …/contacts/:number/avatar and …/contacts/:id/identity
 * (docs/api-guide.md, "Contacts").
 */
import type { ContactLookups } from '../../contacts/contact-lookups.js';
import type { ContactsReadModel } from '../../contacts/contacts-read-model.js';
import type { IdentitiesReadModel } from '../../contacts/identities-read-model.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  AvatarSchema,
  ContactListSchema,
  ContactParams,
  IdentityParams,
  IdentitySchema,
  ListContactsQuery,
  NumberCheckSchema,
} from '../schemas/contacts.js';
import { LOOKUPS_RATE_LIMITED } from './responses.js';

export interface ContactRouteDeps {
  contacts: ContactsReadModel;
  identities: Pick<IdentitiesReadModel, 'identity'>;
  /** With several processes, served by the device's owner (src/cluster/owner-calls.ts). */
  lookups: Pick<ContactLookups, 'check' | 'avatar'>;
  /** The settings the descriptions quote. */
  limits: { checkRatePerMinute: number; checkBurst: number; checkCacheTtlMs: number; avatarCacheTtlMs: number };
}

const tag = 'Contacts';
const NO_DEVICE = { description: 'No such device (admin key only).' };
const NOT_ONLINE = { description: 'The session is not online (`session_not_online`); `detail` names the state.' };
const ENGINE_FAILED = {
  description: 'The network did not answer the lookup (`engine_error`); nothing was cached, try again.',
};

export function contactRoutes({ contacts, identities, lookups, limits }: ContactRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/contacts',
      operationId: 'listContacts',
      tag,
      summary: 'List contacts',
      description:
        "The account's contacts as the network reports them, and every number that wrote to the device or that the device wrote to, " +
        'ordered by number. `q` searches numbers and names. Follow `nextCursor` until it is null. Works in every session state.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      query: ListContactsQuery,
      responses: { 200: { description: 'A page of contacts.', schema: ContactListSchema }, 404: NO_DEVICE },
      handler({ params, query }) {
        const page = contacts.list(params.deviceId, {
          limit: query.limit ?? 50,
          after: decodeCursor(query.cursor),
          q: query.q || undefined,
        });
        return {
          status: 200,
          body: { items: page.items, nextCursor: page.nextAfter === null ? null : encodeCursor(page.nextAfter) },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/contacts/:number/check',
      operationId: 'checkContactNumber',
      tag,
      summary: 'Check whether a number exists',
      description:
        `Asks the network whether the number has an account (needs an \`online\` session). Answers are cached per device for ${duration(limits.checkCacheTtlMs)} ` +
        `(CONTACT_CHECK_CACHE_TTL). Fresh lookups are limited per device to ${limits.checkRatePerMinute} a minute, at most ${limits.checkBurst} back to back ` +
        '(CONTACT_CHECK_RATE_PER_MINUTE, CONTACT_CHECK_BURST), because bulk number checks get accounts banned; beyond that `429 rate_limited` with `Retry-After`. ' +
        'Cached answers do not count and are still given.',
      access: 'device',
      scope: 'read',
      params: ContactParams,
      responses: {
        200: { description: 'The answer.', schema: NumberCheckSchema },
        404: NO_DEVICE,
        409: NOT_ONLINE,
        429: LOOKUPS_RATE_LIMITED,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        return { status: 200, body: await lookups.check(params.deviceId, params.number) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/contacts/:number/avatar',
      operationId: 'getContactAvatar',
      tag,
      summary: 'The profile picture of a number',
      description:
        'The URL of the profile picture as the network gives it to this account (needs an `online` session), `null` when there is none or it is hidden. ' +
        `Answers are cached per device for ${duration(limits.avatarCacheTtlMs)} (CONTACT_AVATAR_CACHE_TTL); WhatsApp's URLs expire, so fetch the picture soon. ` +
        'Fresh lookups draw on the allowance of number checks (`429 rate_limited` beyond it).',
      access: 'device',
      scope: 'read',
      params: ContactParams,
      responses: {
        200: { description: 'The answer.', schema: AvatarSchema },
        404: NO_DEVICE,
        409: NOT_ONLINE,
        429: {
          description:
            'Too many fresh lookups (`rate_limited`, the allowance number checks use too); `Retry-After` says how many seconds to wait.',
        },
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        return { status: 200, body: await lookups.avatar(params.deviceId, params.number) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/contacts/:id/identity',
      operationId: 'getContactIdentity',
      tag,
      summary: "A contact's number and LID",
      description:
        "Both addresses of one contact, given either: its number and its LID (WhatsApp's privacy id, `<digits>@lid`), as the network paired them " +
        "for this account (WhatsApp's LID mapping, the alternative address of a message). Never guessed: one that is not known is null, " +
        'both when the contact is unknown. Works in every session state.',
      access: 'device',
      scope: 'read',
      params: IdentityParams,
      responses: { 200: { description: 'What is known.', schema: IdentitySchema }, 404: NO_DEVICE },
      handler({ params }) {
        return { status: 200, body: identities.identity(params.deviceId, params.id) };
      },
    }),
  ];
}

function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}
