import type { EventStore } from '../../eventstore/event-store.js';
import type { DiskReport } from '../../storage/storage-health.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { HealthSchema } from '../schemas/health.js';

export interface ClusterReport {
  memberId: string;
  pid: number;
  devicesOwned: number;
  members: Array<{ memberId: string; devices: number; self: boolean }>;
  subscription?: { state: 'live' | 'behind'; behindMs: number };
}

export function healthRoutes(
  store: EventStore,
  version: string,
  startedAt: number,
  disk: { report(): Promise<DiskReport> },
  cluster?: () => ClusterReport,
): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      operationId: 'health',
      tag: 'System',
      summary: 'Health check',
      description:
        'Public. 200 while the event store answers and the disk has room, 503 `degraded` when the store cannot be reached, ' +
        'free space in DATA_DIR is below DISK_FREE_MIN_BYTES, or the last write failed and none has succeeded since. ' +
        'Without a key it says only that (status, store, disk.low, disk.writeFailing); with the admin key also the version, ' +
        'the uptime, the free bytes and, with several processes, the cluster. It is never refused for failed ' +
        'authentications from the same address; a key it does not know is 401 and counts as one.',
      access: 'public-or-admin',
      // It reports how the read models are doing: it never waits for them.
      reads: 'as-they-are',
      scope: 'none',
      responses: {
        200: { description: 'Healthy.', schema: HealthSchema },
        401: { description: 'A key was sent that the gateway does not know (`unauthorized`).' },
        503: { description: 'The event store cannot be reached, or the disk is (nearly) full.', schema: HealthSchema },
      },
      async handler({ ctx }) {
        const [ok, diskReport] = await Promise.all([store.ping(), disk.report()]);
        const healthy = ok && !diskReport.low && !diskReport.writeFailing;
        const status = healthy ? 'ok' : 'degraded';
        const body =
          ctx.state.caller?.kind === 'admin'
            ? {
                status,
                version,
                uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
                store: { kind: store.kind, ok },
                disk: diskReport,
                ...(cluster ? { cluster: cluster() } : {}),
              }
            : {
                status,
                store: { kind: store.kind, ok },
                disk: { low: diskReport.low, writeFailing: diskReport.writeFailing },
              };
        return { status: healthy ? 200 : 503, headers: { 'Cache-Control': 'no-store' }, body };
      },
    }),
  ];
}
