import type { OutboundGuard } from '../../net/outbound-guard.js';
import { hooksNotConfigured } from '../../webhooks/hook-settings.js';
import type { Webhooks } from '../../webhooks/webhooks.js';
import { decodeSeqCursor, encodeCursor } from '../cursor.js';
import { checkReceiverUrl } from '../receiver-url.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  DeliveryListSchema,
  DeliveryParams,
  DeliverySchema,
  HooksSchema,
  ListDeliveriesQuery,
  PutHooksBody,
  TestResultSchema,
} from '../schemas/hooks.js';

export interface HookRouteDeps {
  webhooks: Webhooks;
  guard: OutboundGuard;
}

const tag = 'Webhooks';
const noDevice = { description: 'No such device (admin key only).' };

export function hookRoutes({ webhooks, guard }: HookRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'put',
      path: '/devices/:deviceId/hooks',
      operationId: 'putHooks',
      tag,
      summary: 'Set the hook configuration',
      description:
        'Sets the receiver URL and the event kinds sent to it. The signing `secret` is made on the first PUT and kept afterwards; `rotateSecret: true` makes a new one. Only events that happen after this answer are sent, and only kinds listed in `events`: ' +
        'deliveries still pending go to the new URL, signed with the current secret, and those of a kind no longer listed end as `failed`.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: PutHooksBody,
      responses: { 200: { description: 'The configuration, with its secret.', schema: HooksSchema }, 404: noDevice },
      async handler({ params, body }) {
        checkReceiverUrl(guard, body.url);
        return { status: 200, body: await webhooks.hooks.configure(params.deviceId, body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/hooks',
      operationId: 'getHooks',
      tag,
      summary: 'Read the hook configuration',
      description: 'Needs the `manage` scope, not `read`: the answer carries the signing secret.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      responses: {
        200: { description: 'The configuration, with its secret.', schema: HooksSchema },
        404: { description: '`hooks_not_configured`, or no such device (admin key only).' },
      },
      handler({ params }) {
        const hook = webhooks.hooks.view(params.deviceId);
        if (!hook) throw hooksNotConfigured(params.deviceId);
        return { status: 200, body: hook };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/hooks',
      operationId: 'deleteHooks',
      tag,
      summary: 'Delete the hook configuration',
      description:
        'Nothing more is sent; deliveries still pending end as `failed`. The secret goes with the configuration: a later PUT makes a new one. Deleting when nothing is configured is a no-op.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      responses: { 204: { description: 'Deleted.' }, 404: noDevice },
      async handler({ params }) {
        await webhooks.hooks.remove(params.deviceId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/hooks/test',
      operationId: 'testHooks',
      tag,
      summary: 'Send a test event',
      description:
        'Sends `{ id, event: "webhook.test", deviceId, timestamp, data: { message } }`, signed like every delivery, once and now (no retries, not in the deliveries log), and answers with the outcome. ' +
        'A receiver that did not answer is `error: "unreachable"`, whatever the cause; the cause (host not found, connection refused, a private address…) is in the gateway log.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      responses: {
        200: { description: 'The outcome of the attempt.', schema: TestResultSchema },
        404: { description: '`hooks_not_configured`, or no such device (admin key only).' },
      },
      async handler({ params }) {
        return { status: 200, body: await webhooks.sendTest(params.deviceId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/hooks/deliveries',
      operationId: 'listHookDeliveries',
      tag,
      summary: 'List recent deliveries',
      description:
        'Newest first; follow `nextCursor` until it is null. Finished records are kept for WEBHOOK_RETENTION (default 7 days). ' +
        'An attempt that got no answer has `lastError: "unreachable"`; with the admin key, `lastErrorDetail` says why.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      query: ListDeliveriesQuery,
      responses: { 200: { description: 'A page of delivery records.', schema: DeliveryListSchema }, 404: noDevice },
      handler({ params, query, ctx }) {
        const page = webhooks.deliveries.list(params.deviceId, {
          status: query.status,
          limit: query.limit ?? 50,
          before: decodeSeqCursor(query.cursor),
          // Why a receiver was unreachable maps the gateway's network: the admin's to see, not the device's.
          detail: ctx.state.caller?.kind === 'admin',
        });
        return {
          status: 200,
          body: {
            items: page.items,
            nextCursor: page.nextBefore === null ? null : encodeCursor(String(page.nextBefore)),
          },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/hooks/deliveries/:deliveryId/retry',
      operationId: 'retryHookDelivery',
      tag,
      summary: 'Deliver a record again',
      description:
        "A pending delivery is tried now, keeping the rest of its schedule; a delivered or failed one is sent once more (one attempt), with the same `webhook-id`. It goes in the device's order: after any older pending delivery. " +
        'Only to a hook that lists its kind: otherwise `404 hooks_not_configured` (reason `kind_not_listed`).',
      access: 'device',
      scope: 'manage',
      params: DeliveryParams,
      responses: {
        202: { description: 'Queued; the record as it is now.', schema: DeliverySchema },
        404: { description: 'No such delivery, `hooks_not_configured`, or no such device (admin key only).' },
      },
      async handler({ params }) {
        return { status: 202, body: await webhooks.deliveries.retry(params.deviceId, params.deliveryId) };
      },
    }),
  ];
}
