/**
 * Hands one outbox message to an engine connection: the recorded content becomes the engine's
 * OutgoingContent (stored media by path; `url` media fetched now, through the network guard, into a
 * scratch file that is removed after the try), sent with the waMessageId assigned when it was queued.
 */
import { access } from 'node:fs/promises';
import type { MediaSettings } from '../../config.js';
import {
  EngineError,
  type EngineConnection,
  type ForwardableContent,
  type MediaFile,
  type OutgoingContent,
  type OutgoingMessage,
} from '../../engines/engine.js';
import { MediaUnavailableError, type MediaFetcher } from '../../media/media-fetcher.js';
import { mediaLimitOf } from '../../media/media-limits.js';
import type { MediaStore } from '../../media/media-store.js';
import { GENERIC_MIMETYPE, MediaTypeError, isMimetype, resolveMimetype } from '../../media/media-type.js';
import type { MediaKind, MediaSource, QueuedContent } from '../stream/outbox-events.js';
import type { PendingMessage } from '../stream/outbox-state.js';

/** Kinds whose bytes file-type does not always recognise (text files, some audio): a `url`'s Content-Type stands in. */
const SERVED_TYPE_TRUSTED: ReadonlySet<MediaKind> = new Set(['file', 'audio']);
/** A send that has not finished by then is treated as a transient failure (and tried again, same id). */
const SEND_TIMEOUT_MS = 5 * 60_000;
/** Engine calls that outlived their timeout, kept at most (each names one message; a hung connection makes a few). */
const MAX_OVERDUE = 1_000;

/**
 * An engine call that outlived its timeout. It may still complete: the next try of the same message on the
 * same connection waits for it (again within the timeout) instead of making a second call, and takes its outcome.
 */
interface OverdueCall {
  connection: EngineConnection;
  call: Promise<void>;
  /** Set once the call has ended, with its error if it failed. */
  ended?: { failed: boolean; error?: unknown };
}

export class MessageDispatcher {
  private readonly overdue = new Map<string, OverdueCall>();

  constructor(
    private readonly media: MediaStore,
    private readonly fetcher: MediaFetcher,
    private readonly settings: MediaSettings,
    private readonly timeoutMs = SEND_TIMEOUT_MS,
  ) {}

  async send(connection: EngineConnection, deviceId: string, message: PendingMessage): Promise<void> {
    const key = `send:${message.waMessageId}`;
    const earlier = this.earlierCall(key, connection);
    if (earlier) return this.awaitCall(key, earlier);
    const scratch: string[] = [];
    const removeScratch = () => Promise.all(scratch.map((path) => this.media.removePath(path))).then(() => undefined);
    let call: Promise<void>;
    try {
      const content = await this.contentOf(deviceId, message.outboxId, message.content, scratch);
      const outgoing: OutgoingMessage = {
        waMessageId: message.waMessageId,
        to: message.to,
        content,
        ...(message.replyTo ? { replyTo: message.replyTo } : {}),
        ...(message.mentions ? { mentions: message.mentions } : {}),
        ...(message.audience ? { audience: message.audience } : {}),
      };
      call = connection.send(outgoing);
    } catch (error) {
      await removeScratch();
      throw error;
    }
    // A downloaded file goes once the engine is done with it, which may be after the timeout.
    const settled = call.then(removeScratch, async (error: unknown) => {
      await removeScratch();
      throw error;
    });
    return this.awaitCall(key, { connection, call: settled });
  }

  async revoke(connection: EngineConnection, waMessageId: string, to: string): Promise<void> {
    const key = `revoke:${waMessageId}`;
    return this.awaitCall(
      key,
      this.earlierCall(key, connection) ?? { connection, call: connection.revoke(waMessageId, to) },
    );
  }

  /**
   * An overdue call of this message on this connection, which the try takes over. One on another connection
   * is dropped: that connection was replaced, and its call is as good as lost.
   */
  private earlierCall(key: string, connection: EngineConnection): OverdueCall | undefined {
    const earlier = this.overdue.get(key);
    if (!earlier) return undefined;
    this.overdue.delete(key);
    return earlier.connection === connection ? earlier : undefined;
  }

  /** The call's outcome within the timeout; a call that outlives it is kept for the next try. */
  private async awaitCall(key: string, entry: OverdueCall): Promise<void> {
    if (entry.ended) {
      if (entry.ended.failed) throw entry.ended.error;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
    });
    try {
      if ((await Promise.race([entry.call, timeout])) !== 'timeout') return;
    } finally {
      clearTimeout(timer);
    }
    if (this.overdue.size >= MAX_OVERDUE) this.overdue.delete(this.overdue.keys().next().value!);
    this.overdue.set(key, entry);
    entry.call.then(
      () => (entry.ended = { failed: false }),
      (error: unknown) => (entry.ended = { failed: true, error }),
    );
    throw new EngineError(
      'timeout',
      `the engine did not answer within ${Math.round(this.timeoutMs / 1000)} s; the next try waits for this call rather than making another`,
    );
  }

  private async contentOf(
    deviceId: string,
    outboxId: string,
    content: QueuedContent,
    scratch: string[],
  ): Promise<OutgoingContent> {
    switch (content.kind) {
      case 'image':
      case 'video':
      case 'audio':
      case 'file':
      case 'sticker':
        return {
          ...content,
          media: await this.mediaFile(deviceId, outboxId, content.kind, content.media, scratch),
        };
      case 'forward':
        return {
          kind: 'forward',
          content: (await this.contentOf(deviceId, outboxId, content.content, scratch)) as ForwardableContent,
        };
      default:
        return content;
    }
  }

  private async mediaFile(
    deviceId: string,
    outboxId: string,
    kind: MediaKind,
    source: MediaSource,
    scratch: string[],
  ): Promise<MediaFile> {
    if (source.source === 'stored') {
      const path = this.media.pathOf(deviceId, outboxId);
      await access(path).catch(() => {
        throw new MediaUnavailableError('the stored media file is missing', 'missing_file');
      });
      return {
        path,
        mimetype: source.mimetype,
        size: source.size,
        ...(source.filename ? { filename: source.filename } : {}),
      };
    }
    await this.media.ensureDeviceDir(deviceId);
    const path = this.media.downloadPathOf(deviceId, outboxId);
    scratch.push(path);
    const fetched = await this.fetcher.fetchTo(source.url, path, mediaLimitOf(kind, this.settings));
    const mimetype = await this.mimetypeOf(kind, source.mimetype, path, fetched.contentType);
    const filename = source.filename ?? (kind === 'file' ? filenameOf(source.url) : undefined);
    return { path, mimetype, size: fetched.size, ...(filename ? { filename } : {}) };
  }

  /**
   * Given, else from the bytes. The server's Content-Type counts only when the bytes are not recognised and
   * the kind is one file-type cannot always tell (files; some audio): an image, video or sticker whose bytes
   * are not one (an HTML login page served as image/jpeg) fails `wrong_type`, as base64 or an upload is 415.
   */
  private async mimetypeOf(
    kind: MediaKind,
    given: string | undefined,
    path: string,
    served: string | undefined,
  ): Promise<string> {
    const trusted =
      SERVED_TYPE_TRUSTED.has(kind) && served !== undefined && served !== GENERIC_MIMETYPE && isMimetype(served)
        ? served
        : undefined;
    try {
      return await resolveMimetype(kind, given, path, trusted);
    } catch (error) {
      if (!(error instanceof MediaTypeError)) throw error;
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
