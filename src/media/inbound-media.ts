/**
 * Received media are downloaded when the message arrives, before it is recorded (so its webhook already
 * carries a working `media.url`): a MessageSink in front of the default one. Each download is streamed
 * to disk and checked against the size limits; a failed one is tried again at once a few times, and if
 * it still fails the message is recorded with `media.status: "pending"` and the download goes on in the
 * background, its outcome recorded as InboundMediaUpdated. With INBOUND_MEDIA=off only metadata is kept.
 */
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { MessageSink } from '../actors/message-sink.js';
import type { ChatActivity, Contact, HistoryChunk, IdentityPair, InboundMessage, Receipt } from '../engines/engine.js';
import { deterministicEventId } from '../eventstore/event-id.js';
import type { InboxCommands } from '../inbox/inbox-commands.js';
import type { InboundMedia } from '../messages/message-events.js';
import type { ChatEvent } from '../inbox/inbox-events.js';
import { type InboundMediaStore, MediaTooLargeError } from './inbound-media-store.js';
import { mediaUrlOf } from './media-url.js';

export interface InboundMediaSettings {
  enabled: boolean;
  /** Largest image, audio, video or sticker; and largest file. */
  maxBytes: number;
  fileMaxBytes: number;
  /** Delays of the tries made before the message is recorded (the first try is immediate). */
  quickRetryDelaysMs: number[];
  /** Delays of the background tries after that. */
  backgroundRetryDelaysMs: number[];
}

export const DEFAULT_QUICK_RETRY_DELAYS_MS = [100, 500];
export const DEFAULT_BACKGROUND_RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000];

/** Media downloads under way at once (gateway-wide); more wait their turn, first come first served. */
export const DOWNLOADS_AT_ONCE = 8;

export class InboundMediaSink implements MessageSink {
  private readonly background = new Set<NodeJS.Timeout>();
  private stopped = false;
  /**
   * The download of each message that has arrived, started before its turn to be recorded: a device's
   * messages are recorded one at a time, and downloading each only in its turn made them wait for each
   * other's downloads (the spool's throughput was one download at a time).
   */
  private readonly early = new WeakMap<InboundMessage, Promise<Partial<InboundMedia>>>();
  /**
   * Arrivals of each message whose download was started and that are not recorded or abandoned yet, and
   * whether one of them was recorded: the file of an abandoned arrival is removed only when no other arrival
   * of the same message (WhatsApp sends it again after a reconnect) is on its way or was recorded.
   */
  private readonly arrivals = new Map<string, { pending: number; recorded: boolean }>();
  private readonly downloads = new PQueue({ concurrency: DOWNLOADS_AT_ONCE });

  constructor(
    private readonly inner: MessageSink,
    private readonly files: InboundMediaStore,
    /** InboundMediaUpdated goes through the inbox stream's one writer. */
    private readonly inbox: Pick<InboxCommands, 'record'>,
    private readonly settings: InboundMediaSettings,
    private readonly log: Logger,
    /** Whether the message is recorded already (an arrival again of a message recorded earlier keeps its file). */
    private readonly isRecorded: (deviceId: string, waMessageId: string) => boolean = () => false,
  ) {}

  arriving(deviceId: string, message: InboundMessage): void {
    this.inner.arriving?.(deviceId, message);
    if (this.wantsDownload(message) && !this.early.has(message))
      this.early.set(message, this.queueDownload(deviceId, message));
  }

  async received(deviceId: string, message: InboundMessage): Promise<void> {
    const { downloadMedia, ...fields } = message;
    if (!fields.media || !downloadMedia || !this.settings.enabled) return this.inner.received(deviceId, fields);
    // The same message object when the spool tries again after a store failure: it is not downloaded twice.
    let download = this.early.get(message);
    if (!download) this.early.set(message, (download = this.queueDownload(deviceId, message)));
    const outcome = await download;
    await this.inner.received(deviceId, { ...fields, media: { ...fields.media, ...outcome } });
    this.settle(deviceId, message, true);
    if (outcome.status === 'pending') this.retryLater(deviceId, message, downloadMedia, 0);
  }

  private wantsDownload(message: InboundMessage): boolean {
    return message.media !== undefined && message.downloadMedia !== undefined && this.settings.enabled;
  }

  /**
   * Never recorded: a file its download kept is removed (no message points to it, and the retention sweep
   * goes by the recorded messages), once the download has ended.
   */
  abandoned(deviceId: string, message: InboundMessage): void {
    this.inner.abandoned?.(deviceId, message);
    const download = this.early.get(message);
    if (!download) return;
    this.early.delete(message);
    void download
      .then(async (outcome) => {
        const alone = this.settle(deviceId, message, false);
        if (!alone || outcome.status !== 'ready' || this.isRecorded(deviceId, message.waMessageId)) return;
        await this.files.remove(deviceId, message.waMessageId);
      })
      .catch((error: unknown) =>
        this.log.warn(
          { deviceId, waMessageId: message.waMessageId, err: error },
          'removing the media of a message not recorded failed',
        ),
      );
  }

  /** An arrival is recorded or abandoned; true when no other arrival of the message is on its way or was recorded. */
  private settle(deviceId: string, message: InboundMessage, recorded: boolean): boolean {
    const key = `${deviceId}/${message.waMessageId}`;
    const entry = this.arrivals.get(key);
    if (!entry) return !recorded;
    entry.recorded ||= recorded;
    entry.pending -= 1;
    if (entry.pending > 0) return false;
    this.arrivals.delete(key);
    return !entry.recorded;
  }

  private queueDownload(deviceId: string, message: InboundMessage): Promise<Partial<InboundMedia>> {
    const key = `${deviceId}/${message.waMessageId}`;
    const entry = this.arrivals.get(key) ?? { pending: 0, recorded: false };
    entry.pending += 1;
    this.arrivals.set(key, entry);
    const outcome = this.downloads.add(() =>
      this.download(deviceId, message, message.downloadMedia!, this.settings.quickRetryDelaysMs),
    );
    outcome.catch(() => undefined); // awaited in the message's turn; never an unhandled rejection meanwhile
    return outcome;
  }

  receipt(deviceId: string, receipt: Receipt): Promise<void> {
    return this.inner.receipt(deviceId, receipt);
  }

  contacts(deviceId: string, contacts: Contact[]): Promise<void> {
    return this.inner.contacts(deviceId, contacts);
  }

  async identities(deviceId: string, pairs: IdentityPair[]): Promise<void> {
    await this.inner.identities?.(deviceId, pairs);
  }

  async activity(deviceId: string, activity: ChatActivity): Promise<void> {
    await this.inner.activity?.(deviceId, activity);
  }

  /** History comes with media metadata only: nothing is downloaded for it. */
  async history(deviceId: string, chunk: HistoryChunk): Promise<void> {
    await this.inner.history?.(deviceId, chunk);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.background) clearTimeout(timer);
    this.background.clear();
  }

  /** `ready` with where and what was kept; `failed` when it can never succeed (too large); else `pending`. */
  private async download(
    deviceId: string,
    message: InboundMessage,
    open: () => Promise<import('node:stream').Readable>,
    delaysMs: readonly number[],
  ): Promise<Partial<InboundMedia>> {
    const limit = message.type === 'file' ? this.settings.fileMaxBytes : this.settings.maxBytes;
    for (let attempt = 0; ; attempt++) {
      try {
        const saved = await this.files.save(deviceId, message.waMessageId, await open(), limit);
        return {
          size: saved.size,
          sha256: saved.sha256,
          url: mediaUrlOf(deviceId, message.waMessageId),
          status: 'ready',
        };
      } catch (error) {
        if (error instanceof MediaTooLargeError) {
          this.log.warn(
            { deviceId, waMessageId: message.waMessageId, limit },
            'received media over the size limit not kept',
          );
          return { status: 'failed' };
        }
        this.log.warn(
          { deviceId, waMessageId: message.waMessageId, attempt, err: error },
          'downloading received media failed',
        );
        const delay = delaysMs[attempt];
        if (delay === undefined || this.stopped) return { status: 'pending' };
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  private retryLater(
    deviceId: string,
    message: InboundMessage,
    open: () => Promise<import('node:stream').Readable>,
    step: number,
  ): void {
    const delay = this.settings.backgroundRetryDelaysMs[step];
    const last = step + 1 >= this.settings.backgroundRetryDelaysMs.length;
    if (delay === undefined || this.stopped) return;
    const timer = setTimeout(() => {
      this.background.delete(timer);
      void (async () => {
        const outcome = await this.download(deviceId, message, open, []);
        if (outcome.status === 'pending' && !last) return this.retryLater(deviceId, message, open, step + 1);
        const media: InboundMedia = {
          ...message.media!,
          ...outcome,
          ...(outcome.status === 'pending' ? { status: 'failed' as const } : {}),
        };
        const event: ChatEvent = {
          type: 'InboundMediaUpdated',
          data: { deviceId, waMessageId: message.waMessageId, media },
        };
        await this.inbox.record(deviceId, event, deterministicEventId(`${deviceId}/${message.waMessageId}/media`));
      })().catch((error: unknown) => this.log.error({ deviceId, err: error }, 'recording a media download failed'));
    }, delay);
    timer.unref();
    this.background.add(timer);
  }
}
