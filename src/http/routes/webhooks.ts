/**
 * Several webhooks per device (`/devices/:deviceId/webhooks`, the device's hook among them as `default`) and
 * global webhooks (admin, `/webhooks`): each its own delivery lane, log and retry (src/webhooks).
 */
import type { OutboundGuard } from '../../net/outbound-guard.js';
import type { Webhooks } from '../../webhooks/webhooks.js';
import { decodeSeqCursor, encodeCursor } from '../cursor.js';
import { checkReceiverUrl } from '../receiver-url.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { DeliveryListSchema, DeliverySchema, ListDeliveriesQuery, TestResultSchema } from '../schemas/hooks.js';
import {
  CreateGlobalWebhookBody,
  CreateWebhookBody,
  DeviceWebhookDeliveryParams,
  DeviceWebhookParams,
  GlobalDeliveryListSchema,
  GlobalDeliverySchema,
  GlobalWebhookDeliveryParams,
  GlobalWebhookParams,
  UpdateGlobalWebhookBody,
  UpdateWebhookBody,
  WebhookListSchema,
  WebhookSchema,
} from '../schemas/webhooks.js';

export interface WebhookRouteDeps {
  webhooks: Webhooks;
  guard: OutboundGuard;
}

const tag = 'Webhooks';
const noDevice = 'No such device (admin key only).';
const noWebhook = {
  description: `No such webhook (\`not_found\`; \`hooks_not_configured\` for \`default\` when the device has no hook). ${noDevice}`,
};
const badInput = { description: '`invalid_request`: the body does not match its schema, or the URL is refused.' };

export function webhookRoutes({ webhooks, guard }: WebhookRouteDeps): RouteSpec[] {
  const registry = webhooks.webhooks;
  const checkUrl = (url: string | undefined) => checkReceiverUrl(guard, url);
  const page = (
    webhookId: string,
    deviceId: string | undefined,
    query: { status?: 'pending' | 'delivered' | 'failed'; limit?: number; cursor?: string },
    admin: boolean,
  ) => {
    const found = webhooks.deliveries.listOf(webhookId, deviceId, {
      status: query.status,
      limit: query.limit ?? 50,
      before: decodeSeqCursor(query.cursor),
      detail: admin,
    });
    return {
      items: found.items,
      nextCursor: found.nextBefore === null ? null : encodeCursor(String(found.nextBefore)),
    };
  };
  /** The log answers only for a webhook there is (or, `default`, was: the hook's log outlives it). */
  const exists = (deviceId: string | undefined, webhookId: string) => {
    if (deviceId !== undefined && webhookId === 'default') return;
    registry.mustExist(deviceId, webhookId);
  };

  return [
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/webhooks',
      operationId: 'createWebhook',
      tag,
      summary: 'Add a webhook',
      description:
        `A further receiver of the device's events, with its own delivery lane, retry schedule and deliveries log: a receiver that is down delays no other. At most 10 per device, the hook (\`PUT /hooks\`, the webhook \`default\`) included. ` +
        'The signing `secret` is made unless given. Only events that happen after this answer are sent, and only kinds listed in `events`.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: CreateWebhookBody,
      responses: {
        201: { description: 'The webhook, with its secret.', schema: WebhookSchema },
        400: badInput,
        404: { description: noDevice },
        409: { description: '`too_many_webhooks`: the device has 10 webhooks.' },
      },
      async handler({ params, body }) {
        checkUrl(body.url);
        return { status: 201, body: await registry.create(params.deviceId, body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/webhooks',
      operationId: 'listWebhooks',
      tag,
      summary: "List the device's webhooks",
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      responses: {
        200: { description: 'Every webhook of the device, oldest first, with its secret.', schema: WebhookListSchema },
        404: { description: noDevice },
      },
      handler({ params }) {
        return { status: 200, body: { items: registry.list(params.deviceId) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/webhooks/:webhookId',
      operationId: 'getWebhook',
      tag,
      summary: 'Read a webhook',
      access: 'device',
      scope: 'manage',
      params: DeviceWebhookParams,
      responses: { 200: { description: 'The webhook, with its secret.', schema: WebhookSchema }, 404: noWebhook },
      handler({ params }) {
        return { status: 200, body: registry.get(params.deviceId, params.webhookId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/devices/:deviceId/webhooks/:webhookId',
      operationId: 'updateWebhook',
      tag,
      summary: 'Change a webhook',
      description:
        'Changes what the body names. Deliveries still pending go to the new URL, signed with the current secret; those of a kind no longer listed end as `failed`. ' +
        'The webhook `default` is the hook: it takes `url`, `events` and `rotateSecret` only.',
      access: 'device',
      scope: 'manage',
      params: DeviceWebhookParams,
      body: UpdateWebhookBody,
      examples: { request: { events: ['message.received', 'message.status'], description: 'CRM' } },
      responses: {
        200: { description: 'The webhook, with its secret.', schema: WebhookSchema },
        400: badInput,
        404: noWebhook,
      },
      async handler({ params, body }) {
        checkUrl(body.url);
        return { status: 200, body: await registry.update(params.deviceId, params.webhookId, body) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/webhooks/:webhookId',
      operationId: 'deleteWebhook',
      tag,
      summary: 'Delete a webhook',
      description: 'Nothing more is sent to it; its deliveries still pending end as `failed`.',
      access: 'device',
      scope: 'manage',
      params: DeviceWebhookParams,
      responses: { 204: { description: 'Deleted.' }, 404: noWebhook },
      async handler({ params }) {
        await registry.remove(params.deviceId, params.webhookId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/webhooks/:webhookId/test',
      operationId: 'testWebhook',
      tag,
      summary: 'Send a test event to a webhook',
      description: 'As `POST /hooks/test`, to this webhook.',
      access: 'device',
      scope: 'manage',
      params: DeviceWebhookParams,
      responses: { 200: { description: 'The outcome of the attempt.', schema: TestResultSchema }, 404: noWebhook },
      async handler({ params }) {
        return { status: 200, body: await webhooks.sendWebhookTest(params.deviceId, params.webhookId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/webhooks/:webhookId/deliveries',
      operationId: 'listWebhookDeliveries',
      tag,
      summary: "List a webhook's recent deliveries",
      description: 'As `GET /hooks/deliveries`, for this webhook.',
      access: 'device',
      scope: 'read',
      params: DeviceWebhookParams,
      query: ListDeliveriesQuery,
      responses: { 200: { description: 'A page of delivery records.', schema: DeliveryListSchema }, 404: noWebhook },
      handler({ params, query, ctx }) {
        exists(params.deviceId, params.webhookId);
        return {
          status: 200,
          body: page(params.webhookId, params.deviceId, query, ctx.state.caller?.kind === 'admin'),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/webhooks/:webhookId/deliveries/:deliveryId/retry',
      operationId: 'retryWebhookDelivery',
      tag,
      summary: "Deliver a webhook's record again",
      description: "As `POST /hooks/deliveries/:deliveryId/retry`, in this webhook's lane.",
      access: 'device',
      scope: 'manage',
      params: DeviceWebhookDeliveryParams,
      responses: {
        202: { description: 'Queued; the record as it is now.', schema: DeliverySchema },
        404: {
          description: `No such delivery or webhook, or the webhook does not list its kind (\`not_found\`; \`hooks_not_configured\` for \`default\`). ${noDevice}`,
        },
      },
      async handler({ params }) {
        return {
          status: 202,
          body: await webhooks.deliveries.retryOf(params.webhookId, params.deviceId, params.deliveryId),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks',
      operationId: 'createGlobalWebhook',
      tag,
      summary: 'Add a global webhook',
      description:
        "A receiver of the events of every device (or of those `devices` lists), with the same envelope and signature; each device's events arrive in order, and devices do not wait for each other. At most 10.",
      access: 'admin',
      scope: 'manage',
      body: CreateGlobalWebhookBody,
      responses: {
        201: { description: 'The webhook, with its secret.', schema: WebhookSchema },
        400: badInput,
        409: { description: '`too_many_webhooks`: there are 10 global webhooks.' },
      },
      async handler({ body }) {
        checkUrl(body.url);
        return { status: 201, body: await registry.create(undefined, body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks',
      operationId: 'listGlobalWebhooks',
      tag,
      summary: 'List the global webhooks',
      access: 'admin',
      scope: 'manage',
      responses: { 200: { description: 'Oldest first, with their secrets.', schema: WebhookListSchema } },
      handler() {
        return { status: 200, body: { items: registry.list(undefined) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/:webhookId',
      operationId: 'getGlobalWebhook',
      tag,
      summary: 'Read a global webhook',
      access: 'admin',
      scope: 'manage',
      params: GlobalWebhookParams,
      responses: {
        200: { description: 'The webhook, with its secret.', schema: WebhookSchema },
        404: { description: 'No such webhook.' },
      },
      handler({ params }) {
        return { status: 200, body: registry.get(undefined, params.webhookId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/webhooks/:webhookId',
      operationId: 'updateGlobalWebhook',
      tag,
      summary: 'Change a global webhook',
      description:
        'Changes what the body names; deliveries still pending of a kind, or a device, no longer listed end as `failed`.',
      access: 'admin',
      scope: 'manage',
      params: GlobalWebhookParams,
      body: UpdateGlobalWebhookBody,
      examples: { request: { events: ['*'], devices: ['shop-1', 'shop-2'] } },
      responses: {
        200: { description: 'The webhook, with its secret.', schema: WebhookSchema },
        400: badInput,
        404: { description: 'No such webhook.' },
      },
      async handler({ params, body }) {
        checkUrl(body.url);
        return { status: 200, body: await registry.update(undefined, params.webhookId, body) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/:webhookId',
      operationId: 'deleteGlobalWebhook',
      tag,
      summary: 'Delete a global webhook',
      access: 'admin',
      scope: 'manage',
      params: GlobalWebhookParams,
      responses: { 204: { description: 'Deleted.' }, 404: { description: 'No such webhook.' } },
      async handler({ params }) {
        await registry.remove(undefined, params.webhookId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/:webhookId/test',
      operationId: 'testGlobalWebhook',
      tag,
      summary: 'Send a test event to a global webhook',
      description: 'As `POST /hooks/test`; the test event names no device (`deviceId: "*"`).',
      access: 'admin',
      scope: 'manage',
      params: GlobalWebhookParams,
      responses: {
        200: { description: 'The outcome of the attempt.', schema: TestResultSchema },
        404: { description: 'No such webhook.' },
      },
      async handler({ params }) {
        return { status: 200, body: await webhooks.sendWebhookTest(undefined, params.webhookId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/:webhookId/deliveries',
      operationId: 'listGlobalWebhookDeliveries',
      tag,
      summary: "List a global webhook's recent deliveries",
      description: "Every device's, newest first, each naming its device.",
      access: 'admin',
      scope: 'read',
      params: GlobalWebhookParams,
      query: ListDeliveriesQuery,
      responses: {
        200: { description: 'A page of delivery records.', schema: GlobalDeliveryListSchema },
        404: { description: 'No such webhook.' },
      },
      handler({ params, query }) {
        exists(undefined, params.webhookId);
        return { status: 200, body: page(params.webhookId, undefined, query, true) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/:webhookId/deliveries/:deliveryId/retry',
      operationId: 'retryGlobalWebhookDelivery',
      tag,
      summary: "Deliver a global webhook's record again",
      description: "As `POST /hooks/deliveries/:deliveryId/retry`, in the lane of the record's device.",
      access: 'admin',
      scope: 'manage',
      params: GlobalWebhookDeliveryParams,
      responses: {
        202: { description: 'Queued; the record as it is now.', schema: GlobalDeliverySchema },
        404: { description: 'No such delivery or webhook, or the webhook does not list its kind (or device).' },
      },
      async handler({ params }) {
        return {
          status: 202,
          body: await webhooks.deliveries.retryOf(params.webhookId, undefined, params.deliveryId),
        };
      },
    }),
  ];
}
