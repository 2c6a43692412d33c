/**
 * Several webhooks per device (`/devices/:deviceId/webhooks`, the device's hook among them as `default`) and
 * global webhooks (admin, `/webhooks`): each its own delivery lane, log and retry (src/webhooks). The eight
 * routes of each are one definition (`webhookScopeRoutes`), told apart by a WebhookScope.
 */
import type { TSchema } from 'typebox';
import type { OutboundGuard } from '../../net/outbound-guard.js';
import type { CreateWebhook, UpdateWebhook } from '../../webhooks/webhook-registry.js';
import type { Webhooks } from '../../webhooks/webhooks.js';
import { decodeSeqCursor, encodeCursor } from '../cursor.js';
import { checkReceiverUrl } from '../receiver-url.js';
import { type ResponseSpec, type RouteSpec, defineRoute } from '../route.js';
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
const badInput = { description: '`invalid_request`: the body does not match its schema, or the URL is refused.' };

/** What tells a device's webhooks from the global ones: paths, access, schemas and the words of the docs. */
interface WebhookScope {
  /** The collection's path. */
  base: string;
  access: 'device' | 'admin';
  /** `Global` in the operation ids, `global ` in the summaries. */
  global: boolean;
  params: { collection?: TSchema; webhook: TSchema; delivery: TSchema };
  bodies: { create: TSchema; update: TSchema };
  deliveries: { record: TSchema; list: TSchema };
  /** The 404 of the collection's routes (a device that is not there), if they have one. */
  noCollection?: ResponseSpec;
  noWebhook: ResponseSpec;
  noDelivery: string;
  listed: string;
  tooMany: string;
  updateExample: Record<string, unknown>;
  descriptions: {
    create: string;
    update: string;
    remove?: string;
    test: string;
    deliveries: string;
    retry: string;
  };
}

const DEVICE_SCOPE: WebhookScope = {
  base: '/devices/:deviceId/webhooks',
  access: 'device',
  global: false,
  params: { collection: DeviceParams, webhook: DeviceWebhookParams, delivery: DeviceWebhookDeliveryParams },
  bodies: { create: CreateWebhookBody, update: UpdateWebhookBody },
  deliveries: { record: DeliverySchema, list: DeliveryListSchema },
  noCollection: { description: noDevice },
  noWebhook: {
    description: `No such webhook (\`not_found\`; \`hooks_not_configured\` for \`default\` when the device has no hook). ${noDevice}`,
  },
  noDelivery: `No such delivery or webhook, or the webhook does not list its kind (\`not_found\`; \`hooks_not_configured\` for \`default\`). ${noDevice}`,
  listed: 'Every webhook of the device, oldest first, with its secret.',
  tooMany: '`too_many_webhooks`: the device has 10 webhooks.',
  updateExample: { events: ['message.received', 'message.status'], description: 'CRM' },
  descriptions: {
    create:
      `A further receiver of the device's events, with its own delivery lane, retry schedule and deliveries log: a receiver that is down delays no other. At most 10 per device, the hook (\`PUT /hooks\`, the webhook \`default\`) included. ` +
      'The signing `secret` is made unless given. Only events that happen after this answer are sent, and only kinds listed in `events`.',
    update:
      'Changes what the body names. Deliveries still pending go to the new URL, signed with the current secret; those of a kind no longer listed end as `failed`. ' +
      'The webhook `default` is the hook: it takes `url`, `events` and `rotateSecret` only.',
    remove: 'Nothing more is sent to it; its deliveries still pending end as `failed`.',
    test: 'As `POST /hooks/test`, to this webhook.',
    deliveries: 'As `GET /hooks/deliveries`, for this webhook.',
    retry: "As `POST /hooks/deliveries/:deliveryId/retry`, in this webhook's lane.",
  },
};

const GLOBAL_SCOPE: WebhookScope = {
  base: '/webhooks',
  access: 'admin',
  global: true,
  params: { webhook: GlobalWebhookParams, delivery: GlobalWebhookDeliveryParams },
  bodies: { create: CreateGlobalWebhookBody, update: UpdateGlobalWebhookBody },
  deliveries: { record: GlobalDeliverySchema, list: GlobalDeliveryListSchema },
  noWebhook: { description: 'No such webhook.' },
  noDelivery: 'No such delivery or webhook, or the webhook does not list its kind (or device).',
  listed: 'Oldest first, with their secrets.',
  tooMany: '`too_many_webhooks`: there are 10 global webhooks.',
  updateExample: { events: ['*'], devices: ['shop-1', 'shop-2'] },
  descriptions: {
    create:
      "A receiver of the events of every device (or of those `devices` lists), with the same envelope and signature; each device's events arrive in order, and devices do not wait for each other. At most 10.",
    update:
      'Changes what the body names; deliveries still pending of a kind, or a device, no longer listed end as `failed`.',
    test: 'As `POST /hooks/test`; the test event names no device (`deviceId: "*"`).',
    deliveries: "Every device's, newest first, each naming its device.",
    retry: "As `POST /hooks/deliveries/:deliveryId/retry`, in the lane of the record's device.",
  },
};

export function webhookRoutes(deps: WebhookRouteDeps): RouteSpec[] {
  return [...webhookScopeRoutes(deps, DEVICE_SCOPE), ...webhookScopeRoutes(deps, GLOBAL_SCOPE)];
}

/** The path parameters of any of the routes: `deviceId` is absent for global webhooks. */
interface WebhookPath {
  deviceId?: string;
  webhookId: string;
  deliveryId: string;
}
const pathOf = (params: unknown) => (params ?? {}) as WebhookPath;

function webhookScopeRoutes({ webhooks, guard }: WebhookRouteDeps, scope: WebhookScope): RouteSpec[] {
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
  const { base, access, params, descriptions } = scope;
  const one = `a ${scope.global ? 'global ' : ''}webhook`;
  const id = (verb: string, rest: string) => `${verb}${scope.global ? 'Global' : ''}${rest}`;
  const collectionParams = params.collection ? { params: params.collection } : {};
  const noCollection: Record<number, ResponseSpec> = scope.noCollection ? { 404: scope.noCollection } : {};
  const theWebhook = { description: 'The webhook, with its secret.', schema: WebhookSchema };

  return [
    defineRoute({
      method: 'post',
      path: base,
      operationId: id('create', 'Webhook'),
      tag,
      summary: `Add ${one}`,
      description: descriptions.create,
      access,
      scope: 'manage',
      ...collectionParams,
      body: scope.bodies.create,
      responses: { 201: theWebhook, 400: badInput, ...noCollection, 409: { description: scope.tooMany } },
      async handler({ params: path, body }) {
        const input = body as CreateWebhook;
        checkUrl(input.url);
        return { status: 201, body: await registry.create(pathOf(path).deviceId, input) };
      },
    }),
    defineRoute({
      method: 'get',
      path: base,
      operationId: id('list', 'Webhooks'),
      tag,
      summary: scope.global ? 'List the global webhooks' : "List the device's webhooks",
      access,
      scope: 'manage',
      ...collectionParams,
      responses: { 200: { description: scope.listed, schema: WebhookListSchema }, ...noCollection },
      handler({ params: path }) {
        return { status: 200, body: { items: registry.list(pathOf(path).deviceId) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${base}/:webhookId`,
      operationId: id('get', 'Webhook'),
      tag,
      summary: `Read ${one}`,
      access,
      scope: 'manage',
      params: params.webhook,
      responses: { 200: theWebhook, 404: scope.noWebhook },
      handler({ params: path }) {
        const { deviceId, webhookId } = pathOf(path);
        return { status: 200, body: registry.get(deviceId, webhookId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: `${base}/:webhookId`,
      operationId: id('update', 'Webhook'),
      tag,
      summary: `Change ${one}`,
      description: descriptions.update,
      access,
      scope: 'manage',
      params: params.webhook,
      body: scope.bodies.update,
      examples: { request: scope.updateExample },
      responses: { 200: theWebhook, 400: badInput, 404: scope.noWebhook },
      async handler({ params: path, body }) {
        const input = body as UpdateWebhook;
        const { deviceId, webhookId } = pathOf(path);
        checkUrl(input.url);
        return { status: 200, body: await registry.update(deviceId, webhookId, input) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${base}/:webhookId`,
      operationId: id('delete', 'Webhook'),
      tag,
      summary: `Delete ${one}`,
      ...(descriptions.remove === undefined ? {} : { description: descriptions.remove }),
      access,
      scope: 'manage',
      params: params.webhook,
      responses: { 204: { description: 'Deleted.' }, 404: scope.noWebhook },
      async handler({ params: path }) {
        const { deviceId, webhookId } = pathOf(path);
        await registry.remove(deviceId, webhookId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${base}/:webhookId/test`,
      operationId: id('test', 'Webhook'),
      tag,
      summary: `Send a test event to ${one}`,
      description: descriptions.test,
      access,
      scope: 'manage',
      params: params.webhook,
      responses: {
        200: { description: 'The outcome of the attempt.', schema: TestResultSchema },
        404: scope.noWebhook,
      },
      async handler({ params: path }) {
        const { deviceId, webhookId } = pathOf(path);
        return { status: 200, body: await webhooks.sendWebhookTest(deviceId, webhookId) };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${base}/:webhookId/deliveries`,
      operationId: id('list', 'WebhookDeliveries'),
      tag,
      summary: `List ${one}'s recent deliveries`,
      description: descriptions.deliveries,
      access,
      scope: 'read',
      params: params.webhook,
      query: ListDeliveriesQuery,
      responses: {
        200: { description: 'A page of delivery records.', schema: scope.deliveries.list },
        404: scope.noWebhook,
      },
      handler({ params: path, query, ctx }) {
        const { deviceId, webhookId } = pathOf(path);
        exists(deviceId, webhookId);
        // Global webhooks are the admin's: their records always show the detail.
        return { status: 200, body: page(webhookId, deviceId, query, ctx.state.caller?.kind === 'admin') };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${base}/:webhookId/deliveries/:deliveryId/retry`,
      operationId: id('retry', 'WebhookDelivery'),
      tag,
      summary: `Deliver ${one}'s record again`,
      description: descriptions.retry,
      access,
      scope: 'manage',
      params: params.delivery,
      responses: {
        202: { description: 'Queued; the record as it is now.', schema: scope.deliveries.record },
        404: { description: scope.noDelivery },
      },
      async handler({ params: path }) {
        const { deviceId, webhookId, deliveryId } = pathOf(path);
        return { status: 202, body: await webhooks.deliveries.retryOf(webhookId, deviceId, deliveryId) };
      },
    }),
  ];
}
