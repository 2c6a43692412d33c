/**
 * GET /devices/:deviceId/pacing: today's sends, the cap and the next window (docs/api-guide.md, "Numbers that stay safe").
 */
import type { PacingStatuses } from '../../outbox/pacing/pacing-status.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { PacingStatusSchema } from '../schemas/pacing.js';

export function pacingRoutes(statuses: PacingStatuses): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/pacing',
      operationId: 'getPacing',
      tag: 'Settings',
      summary: 'Where pacing stands today',
      description:
        "The sends counted today, today's cap and, while sends wait (over the cap, inside quiet hours), when they go again and how many wait. " +
        'Pacing is set with `PATCH /settings` `{ "pacing": … }`.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: "Today's pacing.", schema: PacingStatusSchema },
        404: { description: 'No such device.' },
      },
      async handler({ params }) {
        return { status: 200, body: await statuses.of(params.deviceId) };
      },
    }),
  ];
}
