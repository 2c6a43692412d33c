/**
 * Hands one outbox message to an engine connection: the recorded content becomes the engine's
 * OutgoingContent (stored media by path; `url` media fetched now, through the network guard, into a
 * scratch file that is removed after the try), sent with the waMessageId assigned when it was queued.
 */
import { access } from 'node:fs/promises';
import type { MediaSettings } from '../config.js';
import { EngineError, type EngineConnection, type ForwardableContent, type MediaFile, type OutgoingContent, type OutgoingMessage } from '../engines/engine.js';
import { MediaUnavailableError, type MediaFetcher } from '../media/media-fetcher.js';
import { mediaLimitOf } from '../media/media-limits.js';
import type { MediaStore } from '../media/media-store.js';
import { MediaTypeError, mimetypeMismatch, resolveMimetype } from '../media/media-type.js';
import type { MediaKind, MediaSource, QueuedContent } from './outbox-events.js';
import type { PendingMessage } from './outbox-state.js';

/** A send that has not finished by then is treated as a transient failure (and tried again, same id). */
const SEND_TIMEOUT_MS = 5 * 60_000;

export class MessageDispatcher {
  constructor(
    private readonly media: MediaStore,
    private readonly fetcher: MediaFetcher,
    private readonly settings: MediaSettings,
  ) {}

  async send(connection: EngineConnection, deviceId: string, message: PendingMessage): Promise<void> {
    const scratch: string[] = [];
    try {
      const content = await this.contentOf(deviceId, message.outboxId, message.content, scratch);
      const outgoing: OutgoingMessage = {
        waMessageId: message.waMessageId,
        to: message.to,
        content,
        ...(message.replyTo ? { replyTo: message.replyTo } : {}),
        ...(message.mentions ? { mentions: message.mentions } : {}),
      };
      await withTimeout(connection.send(outgoing), SEND_TIMEOUT_MS);
    } finally {
      await Promise.all(scratch.map((path) => this.media.removePath(path)));
    }
  }

  async revoke(connection: EngineConnection, waMessageId: string, to: string): Promise<void> {
    await withTimeout(connection.revoke(waMessageId, to), SEND_TIMEOUT_MS);
  }

  private async contentOf(deviceId: string, outboxId: string, content: QueuedContent, scratch: string[]): Promise<OutgoingContent> {
    switch (content.kind) {
      case 'image':
      case 'video':
      case 'audio':
      case 'file':
      case 'sticker':
        return { ...content, media: await this.mediaFile(deviceId, outboxId, content.kind, content.media, scratch) } as OutgoingContent;
      case 'forward':
        return { kind: 'forward', content: (await this.contentOf(deviceId, outboxId, content.content, scratch)) as ForwardableContent };
      default:
        return content;
    }
  }

  private async mediaFile(deviceId: string, outboxId: string, kind: MediaKind, source: MediaSource, scratch: string[]): Promise<MediaFile> {
    if (source.source === 'stored') {
      const path = this.media.pathOf(deviceId, outboxId);
      await access(path).catch(() => {
        throw new MediaUnavailableError('the stored media file is missing', 'missing_file');
      });
      return { path, mimetype: source.mimetype, size: source.size, ...(source.filename ? { filename: source.filename } : {}) };
    }
    await this.media.ensureDeviceDir(deviceId);
    const path = this.media.downloadPathOf(deviceId, outboxId);
    scratch.push(path);
    const fetched = await this.fetcher.fetchTo(source.url, path, mediaLimitOf(kind, this.settings));
    const mimetype = await this.mimetypeOf(kind, source.mimetype, path, fetched.contentType);
    const filename = source.filename ?? (kind === 'file' ? filenameOf(source.url) : undefined);
    return { path, mimetype, size: fetched.size, ...(filename ? { filename } : {}) };
  }

  /** Given, else from the bytes, else the server's Content-Type when it fits the kind. */
  private async mimetypeOf(kind: MediaKind, given: string | undefined, path: string, served: string | undefined): Promise<string> {
    try {
      return await resolveMimetype(kind, given, path);
    } catch (error) {
      if (!(error instanceof MediaTypeError)) throw error;
      if (!given && served && served !== 'application/octet-stream' && !mimetypeMismatch(kind, served)) return served;
      throw new MediaUnavailableError(error.message, 'wrong_type');
    }
  }
}

function filenameOf(url: string): string | undefined {
  try {
    const last = new URL(url).pathname.split('/').pop();
    return last ? decodeURIComponent(last).slice(0, 255) || undefined : undefined;
  } catch {
    return undefined;
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EngineError('timeout', `the engine did not answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
