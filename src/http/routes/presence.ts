/**
 * Presence of contacts (API Part 3): subscribe to a contact's presence (needs an online session); read the last
 * state and last-seen time the gateway saw (the contact-presence read model, src/contacts/contact-presence.ts).
 */
import type { ContactPresenceReadModel, PresenceSubscriptions } from '../../contacts/contact-presence.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { ContactParams, PresenceSchema, SubscribedSchema } from '../schemas/contacts.js';
import { NOT_ONLINE } from './responses.js';

export interface PresenceRouteDeps {
  subscriptions: Pick<PresenceSubscriptions, 'subscribe'>;
  presence: Pick<ContactPresenceReadModel, 'get'>;
}

export function presenceRoutes({ subscriptions, presence }: PresenceRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/contacts/:number/presence',
      operationId: 'subscribeContactPresence',
      tag: 'Contacts',
      summary: "Subscribe to a contact's presence",
      description:
        'The network then reports when the contact comes online or goes offline (and types): `presence.update` events, with `lastSeen` when known. Needs an online session.',
      access: 'device',
      scope: 'manage',
      params: ContactParams,
      responses: {
        200: { description: 'Subscribed.', schema: SubscribedSchema },
        409: NOT_ONLINE,
        502: { description: 'The network did not take the subscription (`engine_error`).' },
      },
      async handler({ params }) {
        await subscriptions.subscribe(params.deviceId, params.number);
        return { status: 200, body: { number: params.number, subscribed: true as const } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/contacts/:number/presence',
      operationId: 'getContactPresence',
      tag: 'Contacts',
      summary: "A contact's last presence",
      description: 'The last state seen (`unknown` before any) and when the contact was last seen online.',
      access: 'device',
      scope: 'read',
      params: ContactParams,
      responses: { 200: { description: 'The last presence seen.', schema: PresenceSchema } },
      async handler({ params }) {
        return { status: 200, body: presence.get(params.deviceId, params.number) };
      },
    }),
  ];
}
