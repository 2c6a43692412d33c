import Type from 'typebox';
import type { Metrics } from '../../metrics/metrics.js';
import { type RouteSpec, defineRoute } from '../route.js';

export function metricsRoutes(metrics: Metrics, isPublic: boolean): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      tag: 'System',
      summary: 'Prometheus metrics',
      description: 'Prometheus text format. Needs the admin key unless METRICS_PUBLIC=true.',
      access: isPublic ? 'public' : 'admin',
      scope: isPublic ? 'none' : 'read',
      reads: 'as-they-are',
      responses: {
        200: {
          description: 'Metrics.',
          schema: Type.String(),
          contentType: 'text/plain; version=0.0.4; charset=utf-8',
        },
      },
      async handler() {
        const { body } = await metrics.render();
        return { status: 200, body, headers: { 'Cache-Control': 'no-store' } };
      },
    }),
  ];
}
