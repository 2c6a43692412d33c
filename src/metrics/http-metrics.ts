import type { Middleware } from 'koa';
import type { Metrics } from './metrics.js';

/** Counts requests by route template (never the raw path: ids would explode the label set). */
export function httpMetrics(metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : 'unmatched';
      metrics.httpRequests.inc({ route, method: ctx.method, status: String(ctx.status) });
      metrics.httpDuration.observe({ route }, (performance.now() - started) / 1000);
    }
  };
}
