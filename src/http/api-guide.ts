/** The first page of /docs (the OpenAPI description): how to authenticate and get a first session online. */
export const API_GUIDE = [
  'Self-hosted HTTP API for WhatsApp-style messaging devices.',
  '',
  "**Authentication.** The admin key (`X-Admin-Key`, or `Authorization: Bearer`) manages devices and reaches every route. Creating a device answers its device key (`dk_…`, shown once): `X-Device-Key` (or Bearer) on that device's own routes. Another device's key is `401`; a device key on an admin-only route is `403`. Scoped keys (`POST /devices/{id}/keys`) hold some of `read`, `send` and `manage`: each operation names the scope it needs (`x-scope`), and a key without it is `403 insufficient_scope`.",
  '',
  '**A first session.** `POST /devices` `{"name": "Shop", "engine": "sandbox"}` → `POST /devices/{id}/session/open` → `GET /devices/{id}/session/qr.png` (scan it; in the sandbox: `POST /sandbox/devices/{id}/scan`) → `GET /devices/{id}/session/state` says `online` → `POST /devices/{id}/send/text`. `PUT /devices/{id}/hooks` pushes events to a URL of yours.',
  '',
  '**Errors** are RFC 9457 problem+json with a stable `code`; no input produces a 5xx.',
].join('\n');
