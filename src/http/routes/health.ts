import Type from 'typebox';
import type { EventStore } from '../../eventstore/event-store.js';
import { type RouteSpec, defineRoute } from '../route.js';

const HealthSchema = Type.Object({
  status: Type.Enum(['ok', 'degraded']),
  version: Type.String(),
  uptimeSeconds: Type.Number({ minimum: 0 }),
  store: Type.Object({ kind: Type.Enum(['sqlite', 'eventstoredb']), ok: Type.Boolean() }),
});

export function healthRoutes(store: EventStore, version: string, startedAt: number): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      operationId: 'health',
      tag: 'System',
      summary: 'Health check',
      description: 'Public. 200 while the event store answers, 503 `degraded` when it cannot be reached.',
      access: 'public',
      responses: {
        200: { description: 'Healthy.', schema: HealthSchema },
        503: { description: 'The event store cannot be reached.', schema: HealthSchema },
      },
      async handler() {
        const ok = await store.ping();
        return {
          status: ok ? 200 : 503,
          headers: { 'Cache-Control': 'no-store' },
          body: {
            status: ok ? 'ok' : 'degraded',
            version,
            uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
            store: { kind: store.kind, ok },
          },
        };
      },
    }),
  ];
}
