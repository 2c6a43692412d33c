/**
 * GET /devices/:deviceId/messages/:waMessageId: one message and the whole life of a send (the message index).
 * GET /devices/:deviceId/messages/:waMessageId/media: the bytes of a message's media, streamed from disk with
 * their type, length and file name, while the retention period lasts: received ones (also those the account sent
 * from another device, recorded as received), and those this device sent, kept from their `sent` on.
 */
import { type FileHandle, open } from 'node:fs/promises';
import Type from 'typebox';
import type { MessageIndex } from '../../chats/message-index.js';
import type { MessageStatus } from '../../messages/message-events.js';
import { DomainError } from '../../errors/domain-error.js';
import type { InboundMediaStore } from '../../media/inbound-media-store.js';
import type { MediaStore } from '../../media/media-store.js';
import { servableMimetype } from '../../media/media-type.js';
import { mediaOf } from '../../outbox/stream/outbox-events.js';
import type { SeenMessage } from '../../outbox/commands/seen-messages.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { MessageDetailSchema } from '../schemas/chats.js';
import { MessageParams } from '../schemas/send.js';
import { ONLY_WHAT_THE_GATEWAY_SAW, withOwnNumber } from './chats.js';

export interface MessageRouteDeps {
  index: Pick<MessageIndex, 'find' | 'message'>;
  files: InboundMediaStore;
  /** The outbox's media: a sent message's file is moved from there to `files` just after its `sent` is recorded. */
  outboxFiles: Pick<MediaStore, 'pathOf'>;
  /** How long received media (and the kept media of sent messages) are kept (ms). */
  retentionMs: number;
  now?: () => number;
}

export function messageRoutes({
  index,
  files,
  outboxFiles,
  retentionMs,
  now = Date.now,
}: MessageRouteDeps): RouteSpec[] {
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
        if (!message)
          throw new DomainError(
            'message_not_found',
            `no message ${params.waMessageId} was sent or received by this device through the gateway`,
          );
        return { status: 200, body: withOwnNumber(device, message) };
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
        const { deviceId, waMessageId } = params;
        const seen = index.find(deviceId, waMessageId);
        if (!seen)
          throw new DomainError('message_not_found', `no message ${waMessageId} was sent or received by this device`);
        const media = keptMedia(seen);
        const expired = () =>
          new DomainError(
            'media_expired',
            `the media of ${waMessageId} was kept for the retention period and is gone`,
            { reason: 'expired' },
          );
        if (now() - media.storedAt > retentionMs) throw expired();
        // Received media and the kept media of sent messages are in the same place, by waMessageId. A sent one is
        // moved there from the outbox just after its `sent` is recorded (which shows its url): until then it is
        // read where it waited. The kept place is asked again last, in case the move came in between.
        const kept = files.pathOf(deviceId, waMessageId);
        const file = await openFirst(
          seen.outboxId === undefined ? [kept] : [kept, outboxFiles.pathOf(deviceId, seen.outboxId), kept],
        );
        if (!file) throw expired();
        const { size } = await file.stat().catch(async (error: unknown) => {
          await file.close();
          throw error;
        });
        const mimetype = servableMimetype(media.mimetype);
        // The sender's name for the file; a lone surrogate in it would make the header's percent-encoding throw
        // (a round trip through UTF-8 turns it into U+FFFD).
        const filename = Buffer.from(media.filename ?? `${waMessageId}${extensionOf(mimetype)}`).toString();
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

/** The first of `paths` that can be opened; undefined when none is there. */
async function openFirst(paths: readonly string[]): Promise<FileHandle | undefined> {
  for (const path of paths) {
    try {
      return await open(path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return undefined;
}

/**
 * The media of a message as served: its type and name as recorded, and when its file was stored (the retention
 * counts from then). Throws why there is none to serve.
 */
function keptMedia(seen: SeenMessage): {
  mimetype: string | undefined;
  filename: string | undefined;
  storedAt: number;
} {
  const { waMessageId } = seen;
  // Sent through this gateway: its media as its content names it (a forward's own copy included). Any other
  // message, the account's own from its phone or another linked device too, has its media as received.
  const media = seen.content ? mediaOf(seen.content) : seen.media;
  if (!media) throw new DomainError('not_found', `message ${waMessageId} has no media`);
  // Deleted for everyone: hidden as the message's view hides it.
  if (seen.revoked)
    throw new DomainError('media_unavailable', `message ${waMessageId} was deleted by its sender`, {
      reason: 'revoked',
    });
  if ('source' in media) {
    // The outbox keeps a stored (base64 or uploaded) media from the message's `sent` on; the index records when.
    if (seen.mediaStoredAt !== undefined)
      return { mimetype: media.mimetype, filename: media.filename, storedAt: seen.mediaStoredAt };
    if (media.source === 'url')
      throw new DomainError(
        'media_unavailable',
        `the media of ${waMessageId} was fetched from its url when sent, and not kept`,
        { reason: 'not_kept' },
      );
    throw notSent(waMessageId, seen.status);
  }
  if (media.status !== 'ready' || seen.mediaStoredAt === undefined) throw mediaUnavailable(waMessageId, media.status);
  return { mimetype: media.mimetype, filename: media.filename, storedAt: seen.mediaStoredAt };
}

const NEVER_SENT: ReadonlySet<string> = new Set<MessageStatus>(['failed', 'cancelled', 'expired']);

/** Why a sent message's stored media is not kept: not sent yet (its bytes wait in the outbox), or never sent. */
function notSent(waMessageId: string, status: string | undefined): DomainError {
  if (status !== undefined && NEVER_SENT.has(status)) {
    return new DomainError(
      'media_unavailable',
      `message ${waMessageId} was never sent (${status}): its media was not kept`,
      { reason: 'not_sent' },
    );
  }
  return new DomainError(
    'media_unavailable',
    `message ${waMessageId} is not sent yet; its media is kept from its \`sent\` on: ask again then`,
    { reason: 'not_sent' },
  );
}

/** Why a received media cannot be served, by its download status (`undefined`: only its metadata was recorded). */
function mediaUnavailable(waMessageId: string, status: string | undefined): DomainError {
  switch (status) {
    case 'pending':
      return new DomainError(
        'media_unavailable',
        `the media of ${waMessageId} is still being downloaded; ask again shortly`,
        { reason: 'not_downloaded' },
      );
    case 'failed':
      return new DomainError('media_unavailable', `the media of ${waMessageId} could not be downloaded from WhatsApp`, {
        reason: 'failed',
      });
    default:
      return new DomainError(
        'media_unavailable',
        `only the metadata of ${waMessageId}'s media was recorded (INBOUND_MEDIA was off)`,
        { reason: 'metadata_only' },
      );
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
  return EXTENSIONS[mimetype.split(';')[0].trim().toLowerCase()] ?? '';
}
