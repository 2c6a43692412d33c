/**
 * The /status routes (API Part 3, "Status (stories)"): a status is a send to `status@broadcast` through the
 * outbox (rate limit, Idempotency-Key, restart safety), seen by its audience; GET /status lists this device's
 * statuses of the last 24 h with their viewers (from read receipts); DELETE revokes one for everyone.
 */
import { DomainError } from '../../errors/domain-error.js';
import type { MediaSettings } from '../../config.js';
import type { MediaStore } from '../../media/media-store.js';
import type { SendCommands } from '../../outbox/commands/send-commands.js';
import { STATUS_CHAT, STATUS_LIFETIME_MS } from '../../status/status-chat.js';
import type { StatusesReadModel } from '../../status/statuses-read-model.js';
import type { BodyGate } from '../body/body-gate.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import { DeleteMessageSchema, IdempotencyHeaders } from '../schemas/send.js';
import {
  StatusListSchema,
  StatusMediaBody,
  StatusParams,
  StatusPostedSchema,
  StatusTextBody,
} from '../schemas/status.js';
import { idempotencyKeyOf, mediaInputOf, mediaSendRoute } from './send.js';

export interface StatusRouteDeps {
  sends: Pick<SendCommands, 'send' | 'delete'>;
  statuses: Pick<StatusesReadModel, 'list' | 'isStatus'>;
  media: MediaStore;
  mediaSettings: MediaSettings;
  bodyGate: BodyGate;
  now: () => number;
}

const tag = 'Status';

const POSTED = {
  202: { description: 'Queued in the outbox; sent once the session is online.', schema: StatusPostedSchema },
  422: {
    description:
      'No one would see it (`empty_audience`), or the Idempotency-Key was used with another request (`idempotency_key_reused`).',
  },
};

const NOTE =
  '`audience`: the numbers that see it (default: every number the account has exchanged messages with; none: `422 empty_audience`). ' +
  'Queued in the outbox like any send: the rate limit, an `Idempotency-Key` header and restarts apply. Viewers are listed by `GET /status`.';

export function statusRoutes(deps: StatusRouteDeps): RouteSpec[] {
  const { sends } = deps;
  const posted = (answer: { waMessageId: string; outboxId: string }) => ({
    status: 202,
    body: { waMessageId: answer.waMessageId, outboxId: answer.outboxId, status: 'queued' as const },
  });

  const media = (kind: 'image' | 'video') =>
    mediaSendRoute(deps, {
      kind,
      path: `/devices/:deviceId/status/${kind}`,
      operationId: `postStatus${kind === 'image' ? 'Image' : 'Video'}`,
      tag,
      summary: `Post a${kind === 'image' ? 'n image' : ' video'} status`,
      description: () => `Like \`/send/${kind}\` without \`to\`. ${NOTE}`,
      schema: StatusMediaBody,
      responses: (limit) => ({
        ...POSTED,
        413: { description: `Larger than ${limit} bytes (\`payload_too_large\`).` },
        415: { description: 'Not an image (video) (`unsupported_media_type`).' },
      }),
      async handle({ params, body: fields, ctx }, upload) {
        const answer = await sends.send(
          params.deviceId,
          {
            kind,
            to: STATUS_CHAT,
            media: mediaInputOf(fields, upload),
            ...(fields.mimetype === undefined ? {} : { mimetype: fields.mimetype }),
            ...(fields.caption === undefined ? {} : { caption: fields.caption }),
            ...(fields.audience === undefined ? {} : { audience: fields.audience }),
          },
          idempotencyKeyOf(ctx),
        );
        return posted(answer);
      },
    });

  return [
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/status/text',
      operationId: 'postStatusText',
      tag,
      summary: 'Post a text status',
      description: `A text (1 to 700 characters) on a \`backgroundColor\` (\`#RRGGBB\`) in a \`font\` (0 to 9). ${NOTE}`,
      access: 'device',
      scope: 'send',
      reads: 'as-they-are',
      params: DeviceParams,
      headers: IdempotencyHeaders,
      body: StatusTextBody,
      responses: POSTED,
      async handler({ params, body, ctx }) {
        const answer = await sends.send(
          params.deviceId,
          {
            kind: 'text',
            to: STATUS_CHAT,
            text: body.text,
            ...(body.backgroundColor === undefined ? {} : { backgroundColor: body.backgroundColor }),
            ...(body.font === undefined ? {} : { font: body.font }),
            ...(body.audience === undefined ? {} : { audience: body.audience }),
          },
          idempotencyKeyOf(ctx),
        );
        return posted(answer);
      },
    }),
    media('image'),
    media('video'),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/status',
      operationId: 'listStatuses',
      tag,
      summary: "This device's statuses of the last 24 h, with their viewers",
      description: 'Newest first. A viewer is a number whose read receipt of the status arrived.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: { 200: { description: 'The statuses.', schema: StatusListSchema } },
      async handler({ params }) {
        const since = new Date(deps.now() - STATUS_LIFETIME_MS).toISOString();
        return { status: 200, body: { items: deps.statuses.list(params.deviceId, since) } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/status/:waMessageId',
      operationId: 'deleteStatus',
      tag,
      summary: 'Delete a status for everyone',
      description:
        'A status still queued is cancelled (`200`); a sent one is revoked for everyone (`202 deleting`). Not a status of this device: `404`.',
      access: 'device',
      scope: 'send',
      params: StatusParams,
      responses: {
        200: { description: 'Cancelled.', schema: DeleteMessageSchema },
        202: { description: 'Being deleted for everyone.', schema: DeleteMessageSchema },
        404: { description: 'No such status (`not_found`).' },
        409: { description: 'Being sent right now (`message_sending`).' },
      },
      async handler({ params }) {
        if (!deps.statuses.isStatus(params.deviceId, params.waMessageId))
          throw new DomainError('not_found', `no status ${params.waMessageId} was posted by this device`);
        const outcome = await sends.delete(params.deviceId, params.waMessageId);
        return { status: outcome.status === 'deleting' ? 202 : 200, body: outcome };
      },
    }),
  ];
}
