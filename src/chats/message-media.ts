/**
 * Which media of a message may be served, and its file: received media once downloaded, the kept media of sent
 * messages from their `sent` on, for INBOUND_MEDIA_RETENTION; every other case refused with its reason
 * (`GET /devices/:id/messages/:waMessageId/media`, docs/api-guide.md). The route only streams what this opens.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { DomainError } from '../errors/domain-error.js';
import type { InboundMediaStore } from '../media/inbound-media-store.js';
import type { MediaStore } from '../media/media-store.js';
import { servableMimetype } from '../media/media-type.js';
import type { MessageStatus } from '../messages/message-events.js';
import type { SeenMessage } from '../outbox/commands/seen-messages.js';
import { mediaOf } from '../outbox/stream/outbox-events.js';
import type { MessageIndex } from './message-index.js';

export interface MessageMediaDeps {
  index: Pick<MessageIndex, 'find'>;
  files: InboundMediaStore;
  /** The outbox's media: a sent message's file is moved from there to `files` just after its `sent` is recorded. */
  outboxFiles: Pick<MediaStore, 'pathOf'>;
  /** How long received media (and the kept media of sent messages) are kept (ms). */
  retentionMs: number;
  now?: () => number;
}

/** A media file opened for serving: read it from this handle, whoever moves or sweeps the file meanwhile. */
export interface OpenedMedia {
  file: FileHandle;
  size: number;
  mimetype: string;
  filename: string;
}

export class MessageMedia {
  constructor(private readonly deps: MessageMediaDeps) {}

  /** The media of a message, opened; throws the domain error that says why there is none to serve. */
  async open(deviceId: string, waMessageId: string): Promise<OpenedMedia> {
    const { index, files, outboxFiles, retentionMs, now = Date.now } = this.deps;
    const seen = index.find(deviceId, waMessageId);
    if (!seen)
      throw new DomainError('message_not_found', `no message ${waMessageId} was sent or received by this device`);
    const media = keptMedia(seen);
    const expired = () =>
      new DomainError('media_expired', `the media of ${waMessageId} was kept for the retention period and is gone`, {
        reason: 'expired',
      });
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
    return { file, size, mimetype, filename };
  }
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
