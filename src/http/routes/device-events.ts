import { deviceStream } from '../../devices/device-events.js';
import type { EventStore } from '../../eventstore/event-store.js';
import { readDeviceHistory, readDeviceHistoryBackwards } from '../../history/device-history.js';
import type { DeviceHistoryIndex } from '../../projections/device-history-index.js';
import { deviceNotFound } from '../../errors/domain-error.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { HistoryPageSchema, HistoryQuery } from '../schemas/history.js';

export function deviceEventRoutes(store: EventStore, index: DeviceHistoryIndex): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/events',
      operationId: 'getDeviceEvents',
      tag: 'Devices',
      summary: "Page through a device's event history",
      description:
        'Every event of the device across its streams, in the order they happened (or newest first, `direction=backwards`), as stored, for audit and replay. ' +
        'Deleted devices keep their history. Admin key only: a valid device key answers `403`.',
      access: 'admin',
      scope: 'read',
      // Deleted devices keep their history: the route looks for the stream, not for a live device.
      device: 'none',
      params: DeviceParams,
      query: HistoryQuery,
      responses: {
        200: { description: 'A page of events.', schema: HistoryPageSchema },
        404: { description: 'No device ever had this id.' },
      },
      async handler({ params, query }) {
        const [created] = await store.readStream(deviceStream(params.deviceId), { maxCount: 1 });
        if (!created) throw deviceNotFound(params.deviceId);
        const limit = query.limit ?? 100;
        const page =
          query.direction === 'backwards'
            ? await readDeviceHistoryBackwards(store, index, params.deviceId, query.from, limit)
            : await readDeviceHistory(store, index, params.deviceId, query.from ?? 0, limit);
        return { status: 200, body: page };
      },
    }),
  ];
}
