/**
 * GET /devices/:deviceId/messages/:waMessageId: one message and the whole life of a send (the message index).
 * GET /devices/:deviceId/messages/:waMessageId/media: the bytes of a received message's media, streamed
 * from disk with their type, length and file name, while the retention period lasts.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import Type from 'typebox';
import type { MessageIndex } from '../../chats/message-index.js';
import { DomainError } from '../../errors/domain-error.js';
import type { InboundMediaStore } from '../../media/inbound-media-store.js';
import { servableMimetype } from '../../media/media-type.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { MessageDetailSchema } from '../schemas/chats.js';
import { MessageParams } from '../schemas/send.js';
import { ONLY_WHAT_THE_GATEWAY_SAW, withOwnNumber } from './chats.js';

export interface MessageRouteDeps {
  index: Pick<MessageIndex, 'find' | 'message'>;
  files: InboundMediaStore;
  /** How long received media are kept (ms). */
  retentionMs: number;
  now?: () => number;
}

export function messageRoutes({ index, files, retentionMs, now = Date.now }: MessageRouteDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/messages/:waMessageId',
      operationId: 'getMessage',
      tag: 'Messages',
      summary: 'Get a message and what happened to it',
      description:
        'One message the device sent or received, as in a chat\'s message list, plus, for messages sent through this gateway, its `outboxId` and ' +
        '`statusHistory`: every status from `queued` on (`sent`, `delivered`, `read`, `played`, `failed` with the error, `cancelled`, `deleted`) and each edit, ' +
        'in the order recorded. Unknown message `404 message_not_found`. ' +
        ONLY_WHAT_THE_GATEWAY_SAW,
      access: 'device',
      params: MessageParams,
      responses: {
        200: { description: 'The message.', schema: MessageDetailSchema },
        404: { description: 'No such device or message (`message_not_found`).' },
      },
      handler({ params, device }) {
        const message = index.message(params.deviceId, params.waMessageId);
        if (!message) throw new DomainError('message_not_found', `no message ${params.waMessageId} was sent or received by this device through the gateway`);
        return { status: 200, body: withOwnNumber(device, message) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/messages/:waMessageId/media',
      operationId: 'getMessageMedia',
      tag: 'Messages',
      summary: 'Download a received message\'s media',
      description:
        'The bytes of a received image, video, audio, file or sticker, with their `Content-Type`, `Content-Length` and a `Content-Disposition` file name. ' +
        'Unknown message `404 message_not_found`; a message without media `404 not_found`; media that cannot be served `404 media_unavailable` with a `reason`: ' +
        '`not_downloaded` (still being downloaded: ask again shortly), `failed` (the download failed for good), `metadata_only` (INBOUND_MEDIA is off), ' +
        '`revoked` (the sender deleted the message for everyone; its file goes with the retention sweep); ' +
        'past INBOUND_MEDIA_RETENTION `410 media_expired` (reason `expired`).',
      access: 'device',
      params: MessageParams,
      responses: {
        200: { description: 'The media.', contentType: 'application/octet-stream', schema: Type.String({ format: 'binary' }) },
        404: { description: 'No such device or message (`message_not_found`), the message has no media (`not_found`), or its media cannot be served (`media_unavailable`, with `reason`).' },
        410: { description: 'The media was kept for INBOUND_MEDIA_RETENTION and is gone (`media_expired`, reason `expired`).' },
      },
      async handler({ params, ctx }) {
        const { deviceId, waMessageId } = params;
        const seen = index.find(deviceId, waMessageId);
        if (!seen || seen.fromMe) throw new DomainError('message_not_found', `no message ${waMessageId} was received by this device`);
        const media = seen.media;
        if (!media) throw new DomainError('not_found', `message ${waMessageId} has no media`);
        // Deleted for everyone: hidden as the message's view hides it.
        if (seen.revoked) throw new DomainError('media_unavailable', `message ${waMessageId} was deleted by its sender`, { reason: 'revoked' });
        if (media.status !== 'ready' || seen.mediaStoredAt === undefined) throw mediaUnavailable(waMessageId, media.status);
        const expired = () => new DomainError('media_expired', `the media of ${waMessageId} was kept for the retention period and is gone`, { reason: 'expired' });
        if (now() - seen.mediaStoredAt > retentionMs) throw expired();
        const path = files.pathOf(deviceId, waMessageId);
        const size = await stat(path).then((s) => s.size, () => undefined);
        if (size === undefined) throw expired();
        const mimetype = servableMimetype(media.mimetype);
        // The sender's name for the file; a lone surrogate in it would make the header's percent-encoding throw
        // (a round trip through UTF-8 turns it into U+FFFD).
        const filename = Buffer.from(media.filename ?? `${waMessageId}${extensionOf(mimetype)}`).toString();
        // Koa's attachment() writes Content-Disposition with the content-disposition package (RFC 6266 quoting, filename*).
        ctx.attachment(filename, { type: 'attachment' });
        return {
          status: 200,
          // Pieces of 1 MiB: a quarter of the reads and socket writes of 256 KiB ones (loopback throughput is CPU-bound).
          body: createReadStream(path, { highWaterMark: 1024 * 1024 }),
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

/** Why a received media cannot be served, by its download status (`undefined`: only its metadata was recorded). */
function mediaUnavailable(waMessageId: string, status: string | undefined): DomainError {
  switch (status) {
    case 'pending':
      return new DomainError('media_unavailable', `the media of ${waMessageId} is still being downloaded; ask again shortly`, { reason: 'not_downloaded' });
    case 'failed':
      return new DomainError('media_unavailable', `the media of ${waMessageId} could not be downloaded from WhatsApp`, { reason: 'failed' });
    default:
      return new DomainError('media_unavailable', `only the metadata of ${waMessageId}'s media was recorded (INBOUND_MEDIA was off)`, { reason: 'metadata_only' });
  }
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'image/webp': '.webp',
  'image/gif': '.gif',
  'video/mp4': '.mp4',
  'audio/ogg': '.ogg',
  'audio/mpeg': '.mp3',
  'audio/mp4': '.m4a',
  'application/pdf': '.pdf',
};

function extensionOf(mimetype: string): string {
  return EXTENSIONS[mimetype.split(';')[0]!.trim().toLowerCase()] ?? '';
}
