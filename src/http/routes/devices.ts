import type { DeviceRegistry } from '../../devices/device-registry.js';
import type { DevicesReadModel } from '../../devices/devices-read-model.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { invalidRequest } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  CreateDeviceBody,
  DeviceListSchema,
  DeviceMaybeWithKeySchema,
  DeviceSchema,
  DeviceWithKeySchema,
  ListDevicesQuery,
  METADATA_MAX_BYTES,
  UpdateDeviceBody,
} from '../schemas/devices.js';

export interface DeviceRouteDeps {
  registry: DeviceRegistry;
  devices: DevicesReadModel;
  /** Closes and unlinks the session of a deleted device (the Supervisor). */
  sessions?: { remove(deviceId: string): Promise<void> };
}

const tag = 'Devices';

export function deviceRoutes({ registry, devices, sessions }: DeviceRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/devices',
      operationId: 'createDevice',
      tag,
      summary: 'Create a device',
      description:
        "The id is the client's or generated. An id in use, or once used by a deleted device, is refused with 409 `device_exists`. The answer carries the device key, shown only this once.",
      access: 'admin',
      scope: 'manage',
      body: CreateDeviceBody,
      responses: {
        201: { description: 'Created.', schema: DeviceWithKeySchema },
        409: { description: 'The id is taken (`device_exists`).' },
      },
      async handler({ body }) {
        checkMetadataSize(body.metadata);
        return { status: 201, body: await registry.create(body) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices',
      operationId: 'listDevices',
      tag,
      summary: 'List devices',
      description: 'Ordered by id. Follow `nextCursor` until it is null.',
      access: 'admin',
      scope: 'read',
      // The devices read model takes no event a send appends (test/projections/read-barrier.test.ts).
      reads: 'as-they-are',
      query: ListDevicesQuery,
      responses: { 200: { description: 'A page of devices.', schema: DeviceListSchema } },
      handler({ query }) {
        const page = devices.list({ limit: query.limit ?? 50, after: decodeCursor(query.cursor), state: query.state });
        return {
          status: 200,
          body: { items: page.items, nextCursor: page.nextAfter === null ? null : encodeCursor(page.nextAfter) },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId',
      operationId: 'getDevice',
      tag,
      summary: 'Read a device',
      description: 'Admin key only: a valid device key answers `403`.',
      access: 'admin',
      scope: 'read',
      // The devices read model takes no event a send appends (test/projections/read-barrier.test.ts).
      reads: 'as-they-are',
      params: DeviceParams,
      responses: { 200: { description: 'The device.', schema: DeviceSchema }, 404: { description: 'No such device.' } },
      handler({ device }) {
        return { status: 200, body: device.view };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/devices/:deviceId',
      operationId: 'updateDevice',
      tag,
      summary: 'Update a device',
      description:
        'Changes `name` and/or replaces `metadata`; `rotateKey: true` issues a new device key (in this answer only) and the old one stops working at once.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      body: UpdateDeviceBody,
      responses: {
        200: { description: 'The device.', schema: DeviceMaybeWithKeySchema },
        404: { description: 'No such device.' },
      },
      async handler({ params, body }) {
        checkMetadataSize(body.metadata);
        return { status: 200, body: await registry.update(params.deviceId, body) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId',
      operationId: 'deleteDevice',
      tag,
      summary: 'Delete a device',
      description:
        'Closes and unlinks the session, drops the outbox and the hook configuration. The history stays in the event store, and the id stays taken.',
      access: 'admin',
      scope: 'manage',
      params: DeviceParams,
      responses: { 204: { description: 'Deleted.' }, 404: { description: 'No such device.' } },
      async handler({ params }) {
        await registry.delete(params.deviceId);
        // Recorded first, then acted on: the session is logged out and its credentials wiped.
        await sessions?.remove(params.deviceId);
        return { status: 204 };
      },
    }),
  ];
}

function checkMetadataSize(metadata: Record<string, unknown> | undefined): void {
  if (metadata !== undefined && Buffer.byteLength(JSON.stringify(metadata)) > METADATA_MAX_BYTES) {
    throw invalidRequest(`body/metadata must not exceed ${METADATA_MAX_BYTES} bytes as JSON`, [
      { path: '/metadata', message: `must not exceed ${METADATA_MAX_BYTES} bytes as JSON` },
    ]);
  }
}
