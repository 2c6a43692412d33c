/**
 * Builds the OpenAPI 3.1 document from the route declarations, so that the schemas that validate
 * requests are the ones published. OpenAPI 3.1 takes JSON Schema as it is.
 */
import { STATUS_CODES } from 'node:http';
import type { TSchema } from 'typebox';
import { ERROR_CATALOGUE, type ErrorCode } from '../errors/error-codes.js';
import { WEBHOOK_PAYLOADS, envelopeSchema } from '../webhooks/webhook-schemas.js';
import { exampleOf } from './examples.js';
import type { RouteSpec } from './route.js';
import { ProblemSchema } from './schemas/common.js';

interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
}

/**
 * An error response: the Problem schema with one example per code it can carry. The codes are those its
 * description names in backticks (`session_not_online`) that the catalogue answers with this status (a
 * 404 that names none is the router's `not_found`).
 */
function problemResponse(status: number, description: string) {
  const named = [...description.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]);
  const listed = [...new Set(named)].filter(
    (code): code is ErrorCode => code in ERROR_CATALOGUE && ERROR_CATALOGUE[code as ErrorCode].status === status,
  );
  // "No such device." says it in words: the router's 404 for an unknown device is `not_found`.
  const codes: ErrorCode[] = listed.length === 0 && status === 404 ? ['not_found'] : listed;
  const examples = Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: ERROR_CATALOGUE[code].meaning,
        value: {
          type: 'about:blank',
          title: STATUS_CODES[status],
          status,
          code,
          detail: ERROR_CATALOGUE[code].meaning,
        },
      },
    ]),
  );
  return {
    description,
    content: {
      'application/problem+json': {
        schema: { $ref: '#/components/schemas/Problem' },
        ...(codes.length > 0 ? { examples } : {}),
      },
    },
  };
}

/** Tags in the order a reader meets them, each with what it groups; the sandbox comes last. */
const TAGS: ReadonlyArray<{ name: string; description: string }> = [
  {
    name: 'Devices',
    description: "Create, list, read, rename and delete devices, and read a device's history (admin key).",
  },
  {
    name: 'Session',
    description: 'Link an account by QR code, open, close and restart the connection, read its state.',
  },
  { name: 'Sending', description: 'Queue messages in the durable outbox (answered 202 at once) and delete sent ones.' },
  { name: 'Outbox', description: 'What waits to be sent, and cancelling it.' },
  { name: 'Webhooks', description: 'Where events are pushed, the signing secret, the deliveries log and redelivery.' },
  { name: 'Contacts', description: 'Contacts and numbers the device knows, number checks and avatars.' },
  {
    name: 'Groups',
    description:
      'The groups the account is in: create, change, participants, invites, join and leave (need an online session).',
  },
  {
    name: 'Channels',
    description:
      'WhatsApp channels (newsletters): create, follow, rename, mute, resolve a link, read posts with reactions; post with /send.',
  },
  { name: 'Settings', description: 'Per device: reject calls, and the proxy its WhatsApp connection goes through.' },
  {
    name: 'Chats',
    description: 'Read receipts and typing or recording indicators, sent at once (need an online session).',
  },
  { name: 'Messages', description: 'Messages the gateway saw, and the media of received ones.' },
  {
    name: 'Keys',
    description: "A device's scoped keys (`read`, `send`, `manage`): made, listed without secrets, deleted.",
  },
  {
    name: 'Live event stream',
    description: 'Server-sent events with the webhook envelopes, resumable from any position of the log.',
  },
  {
    name: 'Outputs',
    description:
      'Events published to RabbitMQ or NATS JetStream (admin key): at least once, in order per device, resumed from the log after any outage.',
  },
  {
    name: 'AI agents (MCP)',
    description: 'The gateway as a Model Context Protocol server: its routes as tools, with the same keys and scopes.',
  },
  { name: 'System', description: 'Health, metrics, this document and its docs page.' },
  {
    name: 'Status',
    description:
      'Statuses (stories): post text, image or video to an audience through the outbox; list with viewers; delete.',
  },
];
const LAST_TAG = {
  name: 'Sandbox',
  description: 'A simulated network for tests and integrations without a phone (admin key).',
};

function tags(routes: readonly RouteSpec[]): Array<{ name: string; description?: string }> {
  const used = new Set(routes.filter((r) => !r.hidden).map((r) => r.tag));
  const known = [...TAGS, LAST_TAG].map((t) => t.name);
  const others = [...used].filter((name) => !known.includes(name)).map((name) => ({ name }));
  return [...TAGS.filter((t) => used.has(t.name)), ...others, ...(used.has(LAST_TAG.name) ? [LAST_TAG] : [])];
}

export function buildOpenApiDocument(routes: readonly RouteSpec[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (route.hidden) continue;
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { ...info, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/' }],
    tags: tags(routes),
    paths,
    webhooks: webhooks(),
    components: {
      schemas: { Problem: ProblemSchema },
      securitySchemes: {
        AdminKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Admin-Key',
          description: 'The admin key (ADMIN_API_KEY or DATA_DIR/admin.key).',
        },
        DeviceKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Device-Key',
          description:
            'A key of the device in the path (dk_…): the one made with the device (every scope) or a scoped key (`POST /devices/{deviceId}/keys`). Each operation names the scope it needs in `x-scope` and in its security requirement.',
        },
        ...(routes.some((route) => route.acceptsTicket && !route.hidden) ? { StreamTicket: STREAM_TICKET } : {}),
        BearerKey: { type: 'http', scheme: 'bearer', description: 'Either key as a Bearer token.' },
      },
    },
  };
}

const STREAM_TICKET = {
  type: 'apiKey',
  in: 'query',
  name: 'ticket',
  description:
    'A single-use ticket from `POST /stream/tickets`, valid 30 s: how a browser authenticates a WebSocket (it cannot send headers). Keys never go in URLs.',
};

const WEBHOOK_HEADERS = {
  'webhook-id': {
    description: "The event's id (= `id`), the same on every attempt: deduplicate on it.",
    schema: { type: 'string' },
  },
  'webhook-timestamp': { description: 'Unix seconds of this attempt.', schema: { type: 'string' } },
  'webhook-signature': {
    description: "Standard Webhooks signature (`v1,<base64 HMAC-SHA256>`) with the hook's `whsec_` secret.",
    schema: { type: 'string' },
  },
};

/** OpenAPI 3.1 `webhooks`: one POST per event kind, the envelope with that kind's payload. */
function webhooks(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(WEBHOOK_PAYLOADS).map(([kind, { schema, summary }]) => {
      const envelope = envelopeSchema(kind, schema);
      return [
        kind,
        {
          post: {
            operationId: `webhook_${kind.replace('.', '_')}`,
            summary,
            description: `POSTed to the device's hook URL when its \`events\` list \`${kind}\` (or \`*\`). Any 2xx within WEBHOOK_TIMEOUT_MS is success; otherwise it is retried on WEBHOOK_RETRY_SCHEDULE, in order per device.`,
            tags: ['Webhooks'],
            // Sent by the gateway, not called with a key: the receiver checks the signature headers instead.
            security: [],
            parameters: Object.entries(WEBHOOK_HEADERS).map(([name, header]) => ({
              name,
              in: 'header',
              required: true,
              ...header,
            })),
            requestBody: {
              required: true,
              content: { 'application/json': { schema: envelope, example: exampleOf(envelope) } },
            },
            responses: {
              '2XX': { description: 'Received.' },
              default: { description: 'Anything else is a failed attempt, retried (410 Gone ends the delivery).' },
            },
          },
        },
      ];
    }),
  );
}

function operation(route: RouteSpec): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    const contentType = spec.contentType ?? 'application/json';
    const example =
      spec.schema && contentType.includes('json')
        ? (route.examples?.responses?.[Number(status)] ?? exampleOf(spec.schema))
        : undefined;
    if (spec.schema)
      responses[status] = {
        description: spec.description,
        content: { [contentType]: { schema: spec.schema, ...(example === undefined ? {} : { example }) } },
      };
    else
      responses[status] =
        Number(status) >= 400 ? problemResponse(Number(status), spec.description) : { description: spec.description };
  }
  if (route.params || route.query || route.body)
    responses['400'] ??= problemResponse(400, 'Invalid request (`invalid_request`, `malformed_json`).');
  // Any route: an HTTP/1.1 request without a Host header is refused (src/http/middleware/require-host.ts).
  responses['400'] ??= problemResponse(400, 'An HTTP/1.1 request without a Host header (`invalid_request`).');
  if (route.body) {
    responses['413'] ??= problemResponse(413, 'Body too large (`payload_too_large`).');
    responses['415'] ??= problemResponse(
      415,
      route.bodyParser?.multipart
        ? 'Body is neither JSON nor multipart, or the media type is not accepted (`unsupported_media_type`).'
        : 'Body is not JSON (`unsupported_media_type`).',
    );
  }
  if (route.access !== 'public') {
    responses['401'] ??= problemResponse(401, 'Missing or wrong key (`unauthorized`).');
    if (route.access === 'admin')
      responses['403'] ??= problemResponse(403, 'A device key on an admin route (`forbidden`).');
    else if (route.scope !== 'none')
      responses['403'] ??= problemResponse(
        403,
        `A device key without the \`${route.scope}\` scope (\`insufficient_scope\`, with \`requiredScope\`).`,
      );
    responses['503'] ??= problemResponse(
      503,
      "The event store cannot be reached (`store_unavailable`), or, with several processes, the device's process did not answer in time (`busy`, with `Retry-After`).",
    );
  }
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    security: security(route),
    // The scope a device key needs (docs/api-guide.md, "Scoped keys"); the admin key passes everywhere.
    'x-scope': route.scope,
    parameters: [
      ...parameters(route.params, 'path'),
      ...parameters(route.query, 'query'),
      ...parameters(route.headers, 'header'),
    ],
    ...(route.body ? { requestBody: { required: true, content: requestContent(route, route.body) } } : {}),
    responses,
  };
}

/** JSON, and for routes that take uploads the same fields as multipart/form-data with a binary `file` part. */
function requestContent(route: RouteSpec, body: TSchema): Record<string, unknown> {
  const example = route.examples?.request ?? exampleOf(body, { optional: false });
  const content: Record<string, unknown> = {
    'application/json': { schema: body, ...(example === undefined ? {} : { example }) },
  };
  if (route.bodyParser?.multipart) {
    const { properties = {} } = body as { properties?: Record<string, unknown> };
    const file = { type: 'string', format: 'binary', description: 'The media itself (instead of `url` or `base64`).' };
    content['multipart/form-data'] = { schema: { ...body, properties: { ...properties, file } } };
  }
  return content;
}

function security(route: RouteSpec): Array<Record<string, string[]>> {
  if (route.access === 'public') return [];
  const admin: Array<Record<string, string[]>> = [{ AdminKey: [] }, { BearerKey: [] }];
  // `{}` first: no key at all is accepted too.
  if (route.access === 'public-or-admin') return [{}, ...admin];
  if (route.access === 'admin') return admin;
  // The scope a device key needs is the operation's `x-scope`. Not named in the requirement: OpenAPI 3.1 allows
  // roles there, but Swagger UI (/docs) stops rendering at the first operation whose apiKey requirement has one.
  return [...admin, { DeviceKey: [] }, ...(route.acceptsTicket ? [{ StreamTicket: [] }] : [])];
}

function parameters(schema: TSchema | undefined, where: 'path' | 'query' | 'header') {
  if (!schema) return [];
  const { properties = {}, required = [] } = schema as { properties?: Record<string, TSchema>; required?: string[] };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.includes(name),
    schema: property,
    ...((property as { description?: string }).description
      ? { description: (property as { description?: string }).description }
      : {}),
  }));
}
