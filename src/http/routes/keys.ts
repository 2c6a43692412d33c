import type { DeviceKeys } from '../../devices/device-keys.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { CreateKeyBody, CreatedKeySchema, KeyListSchema, KeyParams } from '../schemas/keys.js';

const tag = 'Keys';

export function keyRoutes(keys: DeviceKeys): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/keys',
      operationId: 'createDeviceKey',
      tag,
      summary: 'Make a scoped key',
      description:
        'A key of this device with only the scopes listed (`read`, `send`, `manage`; the key made with the device has all three). The key is in this answer only; the gateway keeps its hash. At most 50 per device (`409 too_many_keys`). A scoped key gives no scope it lacks itself (`403 insufficient_scope`, naming it); the admin key and the key made with the device may give any.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: CreateKeyBody,
      responses: {
        201: { description: 'Made.', schema: CreatedKeySchema },
        403: { description: 'A scope asked for that the calling scoped key lacks (`insufficient_scope`).' },
        404: { description: 'No such device.' },
        409: { description: 'The device has as many keys as it may (`too_many_keys`).' },
      },
      async handler({ params, body, ctx }) {
        return { status: 201, body: await keys.create(params.deviceId, body, ctx.state.caller) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/keys',
      operationId: 'listDeviceKeys',
      tag,
      summary: "List the device's scoped keys",
      description:
        'Without the keys themselves, with `lastUsedAt`. The key made with the device (rotated with `PATCH /devices/{deviceId}`) is not listed.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: 'The keys, oldest first.', schema: KeyListSchema },
        404: { description: 'No such device.' },
      },
      handler({ params }) {
        return { status: 200, body: { items: keys.list(params.deviceId) } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/keys/:keyId',
      operationId: 'deleteDeviceKey',
      tag,
      summary: 'Delete a scoped key',
      description:
        'The key stops working at once: requests with it are `401` from this answer on, and streams (SSE, WebSocket) opened with it end.',
      access: 'device',
      scope: 'manage',
      params: KeyParams,
      responses: { 204: { description: 'Deleted.' }, 404: { description: 'No such device or key.' } },
      async handler({ params }) {
        await keys.delete(params.deviceId, params.keyId);
        return { status: 204 };
      },
    }),
  ];
}
