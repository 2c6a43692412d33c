import type { DevicesReadModel } from '../../projections/devices-read-model.js';
import { notFound } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { SessionStateSchema } from '../schemas/session.js';

const tag = 'Session';

export function sessionRoutes(devices: DevicesReadModel): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/session/state',
      operationId: 'getSessionState',
      tag,
      summary: 'Read the session state',
      access: 'device',
      params: DeviceParams,
      responses: { 200: { description: 'The session state.', schema: SessionStateSchema }, 404: { description: 'No such device (admin key only).' } },
      handler({ params }) {
        const session = devices.session(params.deviceId);
        if (!session) throw notFound(`device "${params.deviceId}" does not exist`);
        return { status: 200, body: session };
      },
    }),
  ];
}
