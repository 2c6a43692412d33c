/**
 * The outbox's own events, on `outbox-<deviceId>` beside its messages' MessageStatusChanged events
 * (src/messages/message-events.ts), which carry every status after `queued`. A message's life:
 *
 *   OutboxMessageQueued → (OutboxMessageSending → OutboxAttemptFailed)* → OutboxMessageSending →
 *   MessageStatusChanged sent | failed,   or MessageStatusChanged cancelled (or expired) while still queued.
 *
 * OutboxMessageSending is appended before the engine is asked (invariant 2): one followed by nothing was cut
 * short by a crash, and the message is sent again with the same waMessageId.
 */
import { MEDIA_KINDS, type MediaKind, type MediaSource } from '../../media/media-kinds.js';
import type { ContactCard, MessageStatusChangedData } from '../../messages/message-events.js';
import type { ReplyTarget } from '../../engines/engine.js';

export const SEND_KINDS = [
  'text',
  'image',
  'audio',
  'video',
  'file',
  'location',
  'link',
  'reaction',
  'sticker',
  'contact',
  'poll',
  'forward',
  'edit',
] as const;
export type SendKind = (typeof SEND_KINDS)[number];

export { MEDIA_KINDS, type MediaKind, type MediaSource } from '../../media/media-kinds.js';

export const isMediaKind = (kind: SendKind): kind is MediaKind => (MEDIA_KINDS as readonly string[]).includes(kind);

/** A queued message's content as recorded: OutgoingContent with media as a MediaSource. */
export type QueuedContent =
  /** `backgroundColor` (`#RRGGBB`) and `font` (0..9): a text status's look. */
  | { kind: 'text'; text: string; backgroundColor?: string; font?: number }
  | { kind: 'image' | 'video'; media: MediaSource; caption?: string }
  | { kind: 'audio'; media: MediaSource; ptt?: boolean }
  | { kind: 'file'; media: MediaSource; caption?: string }
  | { kind: 'location'; latitude: number; longitude: number; name?: string; address?: string }
  | { kind: 'link'; url: string; text: string; preview: boolean }
  /** `sender`: in a group, the target's author (WhatsApp shows the reaction to them only when it names them). */
  | { kind: 'reaction'; messageId: string; emoji: string; fromMe: boolean; sender?: string }
  | { kind: 'sticker'; media: MediaSource }
  | { kind: 'contact'; contacts: ContactCard[] }
  /** `secret`: the poll's message secret (base64 of 32 random bytes), kept to decrypt its votes. */
  | { kind: 'poll'; question: string; options: string[]; multipleAnswers: boolean; secret: string }
  /** Another message's content, sent again as forwarded; its media (if any) is this message's own copy. */
  | { kind: 'forward'; content: ForwardedContent }
  | { kind: 'edit'; messageId: string; text: string };

export type ForwardedContent = Extract<
  QueuedContent,
  { kind: 'text' | 'image' | 'video' | 'audio' | 'file' | 'sticker' | 'location' | 'link' | 'contact' }
>;

/** The media of a queued content, wherever it sits (a forward carries it inside). */
export function mediaOf(content: QueuedContent): MediaSource | undefined {
  if (content.kind === 'forward') return mediaOf(content.content);
  return 'media' in content ? content.media : undefined;
}

/** The 202 answer of a send; kept with the Idempotency-Key so that a retried request gets it again. */
export interface QueuedAnswer {
  outboxId: string;
  waMessageId: string;
  status: 'queued';
  kind: SendKind;
  to: string;
  createdAt: string;
  /** When it expires unless sent by then. */
  expiresAt?: string;
}

export interface OutboxError {
  code: string;
  message: string;
  /** For `media_unavailable`: why, in a word (http_status, dns_failure, timeout, too_large, wrong_type, …). */
  reason?: string;
}

export interface OutboxMessageQueuedData {
  deviceId: string;
  outboxId: string;
  waMessageId: string;
  to: string;
  /** Position in the device's FIFO: strictly increasing per device. */
  seq: number;
  content: QueuedContent;
  /** ISO 8601: the `createdAt` of the answer. */
  createdAt: string;
  /** The request's Idempotency-Key and a digest of what it asked, when it had one. */
  idempotency?: { key: string; fingerprint: string };
  /** The message it quotes (`replyTo`), as the gateway saw it when the send was accepted. */
  replyTo?: ReplyTarget;
  /** Numbers mentioned in the text or caption. */
  mentions?: string[];
  /** A status (`to` is `status@broadcast`): the numbers that see it. */
  audience?: string[];
  /** ISO 8601: not sent by then, it is `expired` instead (the send's `expiresAt`, or OUTBOX_MESSAGE_TTL). */
  expiresAt?: string;
}

/** PATCH /send/:waMessageId of a message still queued: its text (or caption) is replaced before it goes. */
export interface OutboxMessageEditedData {
  deviceId: string;
  outboxId: string;
  waMessageId: string;
  text: string;
}

export interface OutboxMessageSendingData {
  deviceId: string;
  outboxId: string;
  waMessageId: string;
  /** 1 for the first try. */
  attempt: number;
  /**
   * Epoch ms the try started: the per-device rate (OUTBOX_RATE_PER_MINUTE) is counted on the stream, so it
   * holds whichever process runs the device (absent in events of older versions).
   */
  startedAt?: number;
}

export interface OutboxAttemptFailedData {
  deviceId: string;
  outboxId: string;
  waMessageId: string;
  attempt: number;
  error: OutboxError;
  /** False when the try ended because the session went offline: it does not use up an attempt. */
  counted: boolean;
  /** Epoch ms before which the message is not tried again. */
  retryAt: number;
}

/** DELETE /send/:waMessageId of a sent message: revoke it for everyone once the session is online. */
export interface OutboxRevokeRequestedData {
  deviceId: string;
  waMessageId: string;
  outboxId?: string;
  to: string;
}

export interface OutboxRevokeFailedData {
  deviceId: string;
  waMessageId: string;
  error: OutboxError;
  /** Final: the revoke is given up (the message stays as it was). */
  final: boolean;
  attempt: number;
  retryAt: number;
}

/**
 * Pacing (src/outbox/pacing): the outbox's next try waits, its messages stay queued until `deferredUntil`, when the
 * day's cap renews or the quiet hours end. Recorded when the deferral begins or changes, not at every look.
 */
export interface OutboxDeferredData {
  deviceId: string;
  /** ISO 8601. */
  deferredUntil: string;
  reason: 'daily_cap' | 'quiet_hours';
}

export type OutboxEvent =
  | { type: 'OutboxMessageQueued'; data: OutboxMessageQueuedData }
  | { type: 'OutboxMessageSending'; data: OutboxMessageSendingData }
  | { type: 'OutboxAttemptFailed'; data: OutboxAttemptFailedData }
  | { type: 'OutboxRevokeRequested'; data: OutboxRevokeRequestedData }
  | { type: 'OutboxRevokeFailed'; data: OutboxRevokeFailedData }
  | { type: 'OutboxMessageEdited'; data: OutboxMessageEditedData }
  | { type: 'MessageStatusChanged'; data: MessageStatusChangedData }
  | { type: 'OutboxDeferred'; data: OutboxDeferredData };

/** An event to append; `id` where a retry could append it twice (receipts). */
export type OutboxNewEvent = OutboxEvent & { id?: string };

export type OutboxEventType = OutboxEvent['type'];

export const OUTBOX_EVENT_TYPES: ReadonlySet<string> = new Set<OutboxEventType>([
  'OutboxMessageQueued',
  'OutboxMessageSending',
  'OutboxAttemptFailed',
  'OutboxRevokeRequested',
  'OutboxRevokeFailed',
  'OutboxMessageEdited',
  'MessageStatusChanged',
  'OutboxDeferred',
]);

/** The answer a queued message was (or would have been) given. */
export function answerOf(data: OutboxMessageQueuedData): QueuedAnswer {
  return {
    outboxId: data.outboxId,
    waMessageId: data.waMessageId,
    status: 'queued',
    kind: data.content.kind,
    to: data.to,
    createdAt: data.createdAt,
    ...(data.expiresAt === undefined ? {} : { expiresAt: data.expiresAt }),
  };
}
