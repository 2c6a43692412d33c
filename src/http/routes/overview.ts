import type { DailyActivityReadModel, DayActivity } from '../../activity/daily-activity-read-model.js';
import { utcDay } from '../../activity/daily-activity-read-model.js';
import type { DevicesReadModel } from '../../devices/devices-read-model.js';
import type { OutboxReadModel } from '../../outbox/read-models/outbox-read-model.js';
import type { Clock } from '../../time/clock.js';
import type { WebhookBacklog } from '../../webhooks/webhooks-read-model.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { OverviewQuery, OverviewSchema } from '../schemas/overview.js';

const NONE: DayActivity = { sent: 0, received: 0, failed: 0 };

const lagOf = (backlog: WebhookBacklog | undefined) => backlog ?? { pending: 0, oldestPendingAt: null };

/** The earlier of two ISO timestamps (null: none). */
const earlier = (a: string | null, b: string) => (a === null || b < a ? b : a);

/** GET /overview: the operator's first screen (the dashboard), from read models only. */
export function overviewRoutes(
  devices: DevicesReadModel,
  activity: DailyActivityReadModel,
  outbox: OutboxReadModel,
  webhookBacklog: () => Map<string, WebhookBacklog>,
  clock: Clock,
): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/overview',
      operationId: 'overview',
      tag: 'System',
      summary: 'What every device did today',
      description:
        'Devices by session state, messages sent, received and failed today (UTC), the outbox depth and the webhook lag ' +
        '(deliveries waiting, and since when the oldest), in total and for a page of devices. Counted by read models ' +
        'of the log: cheap enough to poll.',
      access: 'admin',
      scope: 'read',
      query: OverviewQuery,
      responses: { 200: { description: 'The overview.', schema: OverviewSchema } },
      handler({ query }) {
        const now = new Date(clock.now());
        const day = utcDay(now);
        const counts = activity.day(day);
        const depths = outbox.depthByDevice();
        const byState: Record<string, number> = {};
        let total = 0;
        for (const { state, count } of devices.countByState()) {
          byState[state] = count;
          total += count;
        }
        const today = { ...NONE };
        for (const one of counts.values()) {
          today.sent += one.sent;
          today.received += one.received;
          today.failed += one.failed;
        }
        let outboxDepth = 0;
        for (const depth of depths.values()) outboxDepth += depth;
        const backlog = webhookBacklog();
        const webhooks = { pending: 0, oldestPendingAt: null as string | null };
        for (const lane of backlog.values()) {
          webhooks.pending += lane.pending;
          webhooks.oldestPendingAt = earlier(webhooks.oldestPendingAt, lane.oldestPendingAt);
        }
        const page = devices.list({ limit: query.limit ?? 100, after: decodeCursor(query.cursor) });
        return {
          status: 200,
          headers: { 'Cache-Control': 'no-store' },
          body: {
            day,
            generatedAt: now.toISOString(),
            devices: { total, byState },
            today,
            outboxDepth,
            webhooks,
            items: page.items.map((device) => ({
              id: device.id,
              name: device.name,
              state: device.session.state,
              today: counts.get(device.id) ?? NONE,
              outboxDepth: depths.get(device.id) ?? 0,
              webhooks: lagOf(backlog.get(device.id)),
            })),
            nextCursor: page.nextAfter === null ? null : encodeCursor(page.nextAfter),
          },
        };
      },
    }),
  ];
}
