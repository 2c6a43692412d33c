import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Type from 'typebox';
import { pageSecurityHeaders } from '../page-headers.js';
import { type RouteSpec, defineRoute } from '../route.js';

/** Swagger UI from the swagger-ui-dist package, served by the gateway itself: /docs works offline. */
const ASSETS = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;

type AssetName = keyof typeof ASSETS;

/**
 * Swagger UI's own files only: its scripts and styles from the gateway (it sets inline styles, and shows
 * data: images), requests only to the gateway (the OpenAPI document, "Try it out").
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = pageSecurityHeaders(DOCS_CSP);

// Tags folded (docExpansion none): with every operation unfolded, Swagger UI stopped rendering after the first tag.
const INIT_SCRIPT = `window.onload = () => {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, docExpansion: 'none',
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });
};`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Device Messaging Gateway API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/assets/docs-init.js"></script>
</body>
</html>`;

export function docsRoutes(openApiDocument: () => Record<string, unknown>): RouteSpec[] {
  const assetDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  const asset = (name: AssetName) => {
    let content = cache.get(name);
    if (!content) cache.set(name, (content = readFileSync(join(assetDir, name))));
    return content;
  };

  return [
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'openApi',
      tag: 'System',
      summary: 'This API as OpenAPI 3.1',
      description: 'Generated from the same schemas that validate requests.',
      access: 'public',
      scope: 'none',
      responses: {
        200: { description: 'The OpenAPI document.', schema: Type.Object({ openapi: Type.Literal('3.1.0') }) },
      },
      handler: () => ({ status: 200, body: openApiDocument() }),
    }),
    defineRoute({
      method: 'get',
      path: '/docs',
      operationId: 'docs',
      tag: 'System',
      summary: 'Browsable API reference (works without internet access)',
      access: 'public',
      scope: 'none',
      responses: { 200: { description: 'HTML page.', schema: Type.String(), contentType: 'text/html; charset=utf-8' } },
      handler: () => ({ status: 200, body: PAGE, headers: SECURITY_HEADERS }),
    }),
    defineRoute({
      method: 'get',
      path: '/docs/assets/:asset',
      operationId: 'docsAsset',
      tag: 'System',
      summary: 'Assets of the docs page',
      access: 'public',
      scope: 'none',
      hidden: true,
      params: Type.Object({ asset: Type.Enum([...(Object.keys(ASSETS) as AssetName[]), 'docs-init.js']) }),
      responses: { 200: { description: 'The file.', schema: Type.String(), contentType: 'application/octet-stream' } },
      handler: ({ params, ctx }) => {
        ctx.set(SECURITY_HEADERS);
        ctx.set('Cache-Control', 'public, max-age=86400');
        if (params.asset === 'docs-init.js') {
          ctx.type = 'text/javascript; charset=utf-8';
          return { status: 200, body: INIT_SCRIPT };
        }
        ctx.type = ASSETS[params.asset];
        return { status: 200, body: asset(params.asset) };
      },
    }),
  ];
}
