import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Type from 'typebox';
import { pageSecurityHeaders } from '../page-headers.js';
import { notFound } from '../problem.js';
import { type RouteSpec, defineRoute } from '../route.js';

/** Where `npm run build` puts the dashboard (dashboard/vite.config.ts): dist/dashboard, from src/ and from dist/ alike. */
export const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../../../dist/dashboard/', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/**
 * Nothing inline, nothing from elsewhere: scripts and styles come from the gateway's own files, images also
 * from blob: URLs (the QR code is fetched with the key and shown from one), requests only to the gateway.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = pageSecurityHeaders(DASHBOARD_CSP);

const notBuilt = () => notFound('the dashboard is not built: run `npm run build` (or `npm run build:dashboard`)');

export function dashboardRoutes(dir: string = DEFAULT_DASHBOARD_DIR): RouteSpec[] {
  const cache = new Map<string, Buffer>();
  const read = async (path: string): Promise<Buffer | undefined> => {
    const cached = cache.get(path);
    if (cached) return cached;
    try {
      const content = await readFile(path);
      cache.set(path, content);
      return content;
    } catch {
      return undefined;
    }
  };

  return [
    defineRoute({
      method: 'get',
      path: '/dashboard',
      operationId: 'dashboard',
      tag: 'System',
      summary: 'The operator dashboard (a web page; works without internet access)',
      description:
        'Devices with their live state, sessions and QR codes, test messages, outbox, webhooks and deliveries, history and health. ' +
        "It asks for the admin key once and keeps it in the tab's session storage; it calls this API with it in a header, and listens to `GET /stream`.",
      access: 'public',
      scope: 'none',
      responses: {
        200: { description: 'HTML page.', schema: Type.String(), contentType: 'text/html; charset=utf-8' },
        404: { description: 'The dashboard was not built (`npm run build`).' },
      },
      async handler({ ctx }) {
        const page = await read(join(dir, 'index.html'));
        if (!page) throw notBuilt();
        ctx.type = 'text/html; charset=utf-8';
        return { status: 200, body: page, headers: { ...SECURITY_HEADERS, 'Cache-Control': 'no-cache' } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/dashboard/assets/:asset',
      operationId: 'dashboardAsset',
      tag: 'System',
      summary: 'Files of the dashboard',
      access: 'public',
      scope: 'none',
      hidden: true,
      params: Type.Object({
        asset: Type.String({ pattern: '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}\\.(js|css|svg|png|ico|woff2)$' }),
      }),
      responses: {
        200: { description: 'The file.', schema: Type.String(), contentType: 'application/octet-stream' },
        404: { description: 'No such file.' },
      },
      async handler({ params, ctx }) {
        const content = await read(join(dir, 'assets', params.asset));
        if (!content) throw notFound('no such dashboard file');
        ctx.type = TYPES[extname(params.asset)]!;
        // File names carry a hash of their content.
        return {
          status: 200,
          body: content,
          headers: { ...SECURITY_HEADERS, 'Cache-Control': 'public, max-age=31536000, immutable' },
        };
      },
    }),
  ];
}
