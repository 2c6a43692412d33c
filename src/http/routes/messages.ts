/**
 * GET /devices/:deviceId/messages/:waMessageId: one message and the whole life of a send (the message index).
 * GET /devices/:deviceId/messages/:waMessageId/media: the bytes of a message's media, streamed from disk with
 * their type, length and file name, while the retention period lasts: received ones (also those the account sent
 * from another device, recorded as received), and those this device sent, kept from their `sent` on.
 */
import Type from 'typebox';
import type { MessageIndex } from '../../chats/message-index.js';
import type { MessageMedia } from '../../chats/message-media.js';
import { DomainError } from '../../errors/domain-error.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { MessageDetailSchema } from '../schemas/chats.js';
import { MessageParams } from '../schemas/send.js';
import { ONLY_WHAT_THE_GATEWAY_SAW, withOwnNumber } from './chats.js';

export interface MessageRouteDeps {
  index: Pick<MessageIndex, 'message'>;
  /** Which media may be served, and its file (src/chats/message-media.ts). */
  media: Pick<MessageMedia, 'open'>;
  /** Pacing: until when it holds a queued send (epoch ms), if it does (src/outbox/pacing/pacing-status.ts). */
  deferredUntil?: (deviceId: string, outboxId: string) => Promise<number | undefined>;
}

export function messageRoutes({ index, media, deferredUntil }: MessageRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/messages/:waMessageId',
      operationId: 'getMessage',
      tag: 'Messages',
      summary: 'Get a message and what happened to it',
      description:
        "One message the device sent or received, as in a chat's message list, plus, for messages sent through this gateway, its `outboxId` and " +
        '`statusHistory`: every status from `queued` on (`sent`, `delivered`, `read`, `played`, `failed` with the error, `cancelled`, `deleted`) and each edit, ' +
        "in the order recorded. A send that pacing holds (the day's cap, quiet hours) is `queued` with `deferredUntil`. Unknown message `404 message_not_found`. " +
        ONLY_WHAT_THE_GATEWAY_SAW,
      access: 'device',
      scope: 'read',
      params: MessageParams,
      responses: {
        200: { description: 'The message.', schema: MessageDetailSchema },
        404: { description: 'No such device or message (`message_not_found`).' },
      },
      async handler({ params, device }) {
        const message = index.message(params.deviceId, params.waMessageId);
        if (!message)
          throw new DomainError(
            'message_not_found',
            `no message ${params.waMessageId} was sent or received by this device through the gateway`,
          );
        const until =
          message.status === 'queued' && message.outboxId !== undefined
            ? await deferredUntil?.(params.deviceId, message.outboxId)
            : undefined;
        const shown = withOwnNumber(device, message);
        return {
          status: 200,
          body: until === undefined ? shown : { ...shown, deferredUntil: new Date(until).toISOString() },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/messages/:waMessageId/media',
      operationId: 'getMessageMedia',
      tag: 'Messages',
      summary: "Download a message's media, received or sent",
      description:
        "The bytes of an image, video, audio, file or sticker, with their `Content-Type` (the media's `mimetype`), `Content-Length` and a `Content-Disposition` " +
        "file name (the media's `filename`, else the waMessageId with an extension of its type). Served: received media once downloaded (also those the account " +
        'sent from its phone or another linked device, which arrive as received `fromMe` messages); and media this device sent as `base64`, an upload or a forward of kept media, kept ' +
        "from the message's `sent` on (a message's view then shows `media.url`). " +
        'Unknown message `404 message_not_found`; a message without media `404 not_found`; media that cannot be served `404 media_unavailable` with a `reason`: ' +
        '`not_downloaded` (received, still being downloaded: ask again shortly), `failed` (received, the download failed for good), `metadata_only` (received while INBOUND_MEDIA was off), ' +
        '`not_sent` (sent through this gateway and not `sent` yet: its bytes wait in the outbox while it is `queued`, so ask again once it is `sent`; ' +
        'one that `failed`, was `cancelled` or `expired` before it was sent keeps none), ' +
        '`not_kept` (sent by `url`: fetched when sent and never kept, whatever its status), ' +
        '`revoked` (deleted for everyone, by its sender or by this device; its file goes within seconds); ' +
        'past INBOUND_MEDIA_RETENTION from its download or its `sent` `410 media_expired` (reason `expired`; also a sent message whose file was not kept, ' +
        'when the process stopped between its send and the move of its file).',
      access: 'device',
      scope: 'read',
      params: MessageParams,
      responses: {
        200: {
          description: 'The media.',
          contentType: 'application/octet-stream',
          schema: Type.String({ format: 'binary' }),
        },
        404: {
          description:
            'No such device or message (`message_not_found`), the message has no media (`not_found`), or its media cannot be served (`media_unavailable`, with `reason`).',
        },
        410: {
          description:
            'The media was kept for INBOUND_MEDIA_RETENTION and is gone, or its file is missing (`media_expired`, reason `expired`).',
        },
      },
      async handler({ params, ctx }) {
        const { file, size, mimetype, filename } = await media.open(params.deviceId, params.waMessageId);
        // Koa's attachment() writes Content-Disposition with the content-disposition package (RFC 6266 quoting, filename*).
        ctx.attachment(filename, { type: 'attachment' });
        return {
          status: 200,
          // Pieces of 1 MiB: a quarter of the reads and socket writes of 256 KiB ones (loopback throughput is CPU-bound).
          // From the handle opened above: a file moved or swept meanwhile is still read whole.
          body: file.createReadStream({ highWaterMark: 1024 * 1024, autoClose: true }),
          headers: {
            'Content-Type': mimetype,
            'Content-Length': String(size),
            'Cache-Control': 'private, max-age=3600',
          },
        };
      },
    }),
  ];
}
