/**
 * The commands behind /send and /outbox: queue a message (with its media and Idempotency-Key), cancel
 * or revoke one, remove one or all from the outbox. Each appends to the device's outbox first and
 * answers once the read models include the append (read-your-writes: docs/architecture.md, invariant 4).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ReplyTarget } from '../../engines/engine.js';
import type { ContactCard } from '../../messages/message-events.js';
import type { SeenMessage, SeenMessages } from './seen-messages.js';
import type { MediaSource } from '../../media/media-kinds.js';
import { textWithUrl } from '../../messages/link-text.js';
import { isGroupId } from '../../messages/chat-id.js';
import { isStatusChat } from '../../status/status-chat.js';
import { isChannelId } from '../../channels/channel-id.js';
import { DomainError, invalidField } from '../../errors/domain-error.js';
import { type IdempotencyKeys, type RequestFingerprints, fingerprintsOf } from './idempotency-keys.js';
import type { MediaInput, MediaIntake } from '../../media/media-intake.js';
import type { MediaStore } from '../../media/media-store.js';
import type { ReadModelProgress } from '../../projections/projection-runner.js';
import type { ReadBarrier } from '../../projections/read-barrier.js';
import type { DeleteOutcome, EditOutcome, UnansweredCount } from '../stream/outbox-decider.js';
import {
  type ForwardedContent,
  type MediaKind,
  type QueuedAnswer,
  type QueuedContent,
  answerOf,
  mediaOf,
} from '../stream/outbox-events.js';
import type { OutboxReadModel } from '../read-models/outbox-read-model.js';
import type { PendingMessage } from '../stream/outbox-state.js';
import { orderedUuid } from '../../eventstore/event-id.js';
import type { Outboxes } from '../stream/outboxes.js';

/** What every send accepts besides its content: the message it quotes and the numbers it mentions. */
export interface SendContext {
  replyTo?: string;
  /** Numbers, or `all`: every participant of the group (`to`) the groups read model knows now. */
  mentions?: string[] | 'all';
  /** ISO 8601: not sent by then, the message is `expired`. */
  expiresAt?: string;
  /** A status (`to`: `status@broadcast`): the numbers that see it. */
  audience?: string[];
}

export type SendInput = SendContext &
  (
    | { kind: 'text'; to: string; text: string; backgroundColor?: string; font?: number }
    | { kind: 'location'; to: string; latitude: number; longitude: number; name?: string; address?: string }
    | { kind: 'link'; to: string; url: string; text?: string; preview?: boolean }
    | { kind: 'reaction'; to: string; messageId: string; emoji: string }
    | { kind: 'contact'; to: string; contacts: ContactCard[] }
    | { kind: 'poll'; to: string; question: string; options: string[]; multipleAnswers?: boolean }
    | { kind: 'forward'; to: string; messageId: string }
    | {
        kind: MediaKind;
        to: string;
        media: MediaInput;
        mimetype?: string;
        caption?: string;
        filename?: string;
        ptt?: boolean;
      }
  );

export type { DeleteOutcome, EditOutcome } from '../stream/outbox-decider.js';

export interface SendCommandsDeps {
  outboxes: Outboxes;
  projections: ReadModelProgress;
  /**
   * Where the store can say how far its log goes: a send is answered at its commit and the reads wait instead
   * (src/projections/read-barrier.ts). Without it a send waits for the read models, as every other command does.
   */
  readBarrier?: Pick<ReadBarrier, 'beforeRead' | 'afterSend'>;
  outboxView: OutboxReadModel;
  idempotency: IdempotencyKeys;
  intake: MediaIntake;
  media: MediaStore;
  /** The waMessageId of a new message, in the format WhatsApp clients use. */
  newWaMessageId: () => string;
  now?: () => number;
  /** Messages the device has seen (replies, forwards, edits); without it, replyTo and forward find nothing. */
  seen?: SeenMessages;
  /** Where a received message's media is kept (forwards of received media copy it). */
  receivedMediaPath?: (deviceId: string, waMessageId: string) => string;
  /** OUTBOX_MESSAGE_TTL: a message without its own expiresAt expires this long after it was queued. */
  messageTtlMs?: number;
  /** Pacing's unansweredLimit and what the message index knows of the recipient; undefined: no limit. */
  unanswered?: (deviceId: string, to: string) => { limit: number; answered: boolean; sent: number } | undefined;
  /** A status's audience when the send names none: every number the account exchanged messages with. */
  statusAudience?: (deviceId: string) => string[];
  /** The participants of a group as the groups read model knows them (undefined: the account is not in it). */
  groupMembers?: (deviceId: string, groupId: string) => string[] | undefined;
  /** The account's role in a channel (`owner`, `admin`, `subscriber`; undefined: not followed). */
  channelRole?: (deviceId: string, channelId: string) => string | undefined;
}

const DIRECT_NUMBER = /^[0-9]{7,15}$/;

/** Whether deciding a send reads what earlier sends wrote to the read models (the message index, the outbox's record). */
const readsEarlierSends = (input: SendInput) =>
  input.replyTo !== undefined ||
  input.kind === 'forward' ||
  input.kind === 'reaction' ||
  (isStatusChat(input.to) && input.audience === undefined);

const messageNotFound = (waMessageId: string) =>
  new DomainError('message_not_found', `no message ${waMessageId} was seen by this device`);

export class SendCommands {
  private readonly now: () => number;

  constructor(private readonly deps: SendCommandsDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Queues a message; with an Idempotency-Key, a repeated request gets the first answer instead. */
  send(deviceId: string, input: SendInput, idempotencyKey?: string): Promise<QueuedAnswer> {
    if (idempotencyKey === undefined) return this.queue(deviceId, input);
    const request = fingerprintsOf(requestDigest(input));
    return this.deps.idempotency.once(deviceId, idempotencyKey, request, () =>
      this.queue(deviceId, input, { key: idempotencyKey, ...request }),
    );
  }

  /**
   * DELETE /send/:waMessageId: a message still waiting is cancelled, a sent one revoked for everyone. Decided on
   * what the stream holds (a client told the message is `sent`, by the live stream or a webhook, revokes it at
   * once): not on an outbox or a read model that has yet to see that (issue 36).
   */
  async delete(deviceId: string, waMessageId: string): Promise<DeleteOutcome> {
    const { outboxes, outboxView } = this.deps;
    const command = { type: 'DeleteMessage', deviceId, waMessageId, now: this.now() } as const;
    const onLatest = await outboxes.executeOnLatest(deviceId, command);
    let { result, position } = onLatest;
    // Not in the outbox: decided again with the read model's record of it, once that includes the whole stream.
    if (result.kind === 'look-up') {
      await this.readModelsAt(onLatest.latest);
      const sent = outboxView.byWaMessageId(deviceId, waMessageId) ?? null;
      ({ result, position } = await outboxes.execute(deviceId, { ...command, sent }));
    }
    if (result.kind === 'look-up') throw new Error('the outbox asked again for the record it was given');
    if (result.cancelled) await this.removeMedia(deviceId, [result.cancelled]);
    await this.deps.projections.settle(position);
    return result.outcome;
  }

  /** DELETE /outbox/:outboxId: 404 unless queued, 409 while being sent. */
  async remove(deviceId: string, outboxId: string): Promise<void> {
    const { result, position } = await this.deps.outboxes.execute(deviceId, {
      type: 'CancelMessage',
      deviceId,
      outboxId,
      now: this.now(),
    });
    await this.removeMedia(deviceId, [result]);
    await this.deps.projections.settle(position);
  }

  /** DELETE /outbox: every queued message (not those being sent right now). */
  async clear(deviceId: string): Promise<number> {
    const { result, position } = await this.deps.outboxes.execute(deviceId, {
      type: 'ClearOutbox',
      deviceId,
      now: this.now(),
    });
    await this.removeMedia(deviceId, result);
    await this.deps.projections.settle(position);
    return result.length;
  }

  /**
   * PATCH /send/:waMessageId: a message still queued gets its new text before it goes (`edited`); one
   * this device sent less than 15 minutes ago is edited for everyone through the outbox (`editing`). Decided on
   * what the stream holds, as a delete is.
   */
  async edit(deviceId: string, waMessageId: string, text: string): Promise<EditOutcome> {
    const { outboxes } = this.deps;
    const now = this.now();
    const edit = {
      outboxId: orderedUuid(),
      waMessageId: this.deps.newWaMessageId(),
      createdAt: new Date(now).toISOString(),
    };
    const command = { type: 'EditMessage', deviceId, waMessageId, text, now, edit } as const;
    const onLatest = await outboxes.executeOnLatest(deviceId, command);
    let { result, position } = onLatest;
    // Not in the outbox: decided again with what the message index knows of it, once that includes the whole stream.
    if (result.kind === 'look-up') {
      await this.readModelsAt(onLatest.latest);
      const seen = this.deps.seen?.find(deviceId, waMessageId) ?? null;
      ({ result, position } = await outboxes.execute(deviceId, { ...command, seen }));
    }
    if (result.kind === 'look-up') throw new Error('the outbox asked again for the record it was given');
    await this.deps.projections.settle(position);
    return result.outcome;
  }

  /**
   * Waits until the read models include the whole stream, before their record of a message decides a change: a record
   * they have not brought up to date (a lag past the wait) would answer a stale 404 or 409, so this answers 503
   * `busy` instead. Nothing is recorded yet at this point, and the answer says so.
   */
  private async readModelsAt(position: number): Promise<void> {
    if (await this.deps.projections.settle(position)) return;
    throw new DomainError(
      'busy',
      'the read models have not caught up with the log yet, so the message could not be looked up; nothing was changed; try again',
      { retryAfterSeconds: 5, reason: 'read_models_lagging' },
    );
  }

  private async queue(
    deviceId: string,
    input: SendInput,
    idempotency?: { key: string } & RequestFingerprints,
  ): Promise<QueuedAnswer> {
    const { outboxes, media, readBarrier } = this.deps;
    // A send is not held by the router until the read models include the log (its route answers at the commit):
    // one that reads what earlier sends wrote (the message replied to or forwarded, a status's audience) waits here.
    if (readBarrier && readsEarlierSends(input)) await readBarrier.beforeRead();
    this.requireChannelAdmin(deviceId, input.to);
    const outboxId = orderedUuid();
    const replyTo = input.replyTo === undefined ? undefined : this.replyTargetOf(deviceId, input.to, input.replyTo);
    const now = this.now();
    const expiresAt = this.expiryOf(input, now);
    // Reactions are not messages a contact has to answer; groups have no one recipient.
    const unanswered =
      input.kind !== 'reaction' && DIRECT_NUMBER.test(input.to)
        ? await this.unansweredOf(deviceId, input.to)
        : undefined;
    const mentions = this.mentionsOf(deviceId, input);
    const audience = this.audienceOf(deviceId, input);
    const content = await this.contentOf(deviceId, outboxId, input);
    const message = {
      outboxId,
      waMessageId: this.deps.newWaMessageId(),
      to: input.to,
      content,
      createdAt: new Date(now).toISOString(),
      ...(expiresAt === undefined ? {} : { expiresAt }),
      // Recorded with the message: the key and the request's fingerprint (the legacy one only serves to recognise older records).
      ...(idempotency ? { idempotency: { key: idempotency.key, fingerprint: idempotency.fingerprint } } : {}),
      ...(replyTo ? { replyTo } : {}),
      ...(mentions?.length ? { mentions } : {}),
      ...(audience ? { audience } : {}),
    };
    let executed;
    try {
      executed = await outboxes.execute(deviceId, {
        type: 'QueueMessage',
        deviceId,
        message,
        idempotencyTtlMs: this.deps.idempotency.ttlMs,
        ...(idempotency ? { legacyFingerprint: idempotency.legacy } : {}),
        ...(unanswered ? { unanswered } : {}),
      });
    } catch (error) {
      if (mediaOf(content)?.source === 'stored') await media.remove(deviceId, outboxId);
      throw error;
    }
    const { result, position } = executed;
    if (result.kind === 'repeated') {
      if (mediaOf(content)?.source === 'stored') await media.remove(deviceId, outboxId);
      // Another process queued this key first (several processes): its answer is the answer, given once the read
      // models here include that append, as the first request's was (a GET right after it finds the message).
      await this.deps.projections.settle(await outboxes.lastPosition(deviceId));
      return result.answer;
    }
    await (readBarrier ? readBarrier.afterSend(position) : this.deps.projections.settle(position));
    return answerOf(result.message);
  }

  /**
   * What the unanswered limit needs of the recipient, counted by the message index once it holds what the store holds
   * of the outbox (the decider adds what was queued after that: UnansweredCount in outbox-decider.ts).
   */
  private async unansweredOf(deviceId: string, to: string): Promise<UnansweredCount | undefined> {
    const { unanswered, outboxes } = this.deps;
    const first = unanswered?.(deviceId, to);
    // No limit, or a number that wrote: nothing to wait for.
    if (!first || first.answered) return first && { ...first, countedUpToSeq: 0 };
    const { position, seq } = await outboxes.countedPoint(deviceId);
    await this.readModelsAt(position);
    const counted = unanswered!(deviceId, to);
    return counted && { ...counted, countedUpToSeq: seq };
  }

  /**
   * A post to a channel is refused at once unless the account owns or administers it (as the channels read model
   * says): the network would refuse it only after it was queued.
   */
  private requireChannelAdmin(deviceId: string, to: string): void {
    if (!isChannelId(to)) return;
    const role = this.deps.channelRole?.(deviceId, to);
    if (role !== 'owner' && role !== 'admin')
      throw new DomainError('not_channel_admin', `the account is not an owner or admin of the channel ${to}`);
  }

  /** The numbers mentioned: as given, or (`all`) every participant of the group the read model knows at this moment. */
  private mentionsOf(deviceId: string, input: SendInput): string[] | undefined {
    if (input.mentions !== 'all') return input.mentions;
    if (!isGroupId(input.to)) throw invalidField('/mentions', 'can be "all" only in a send to a group');
    const members = this.deps.groupMembers?.(deviceId, input.to);
    if (members === undefined) throw new DomainError('not_found', `the account is not in the group ${input.to}`);
    return members;
  }

  /**
   * A status's audience: as given, else (decided now, after any Idempotency-Key was recognised) every number the
   * account exchanged messages with; none at all is `422 empty_audience`. Not a status: none.
   */
  private audienceOf(deviceId: string, input: SendInput): string[] | undefined {
    if (!isStatusChat(input.to)) return undefined;
    const audience = [...new Set(input.audience ?? this.deps.statusAudience?.(deviceId) ?? [])];
    if (audience.length === 0)
      throw new DomainError(
        'empty_audience',
        input.audience
          ? 'the audience is empty: name at least one number'
          : 'the account has exchanged messages with no one yet: name the audience',
      );
    return audience;
  }

  /** The send's own expiresAt (which must lie ahead), else the TTL's, else none. */
  private expiryOf(input: SendContext, now: number): string | undefined {
    if (input.expiresAt !== undefined) {
      const at = Date.parse(input.expiresAt);
      // The schema's date-time takes a leap second or a zone suffix that Date cannot read.
      if (Number.isNaN(at))
        throw invalidField(
          '/expiresAt',
          `is not a time this gateway can read (${input.expiresAt}); use e.g. 2026-12-01T12:00:00Z`,
        );
      if (!(at > now)) throw invalidField('/expiresAt', `must lie in the future (it is ${input.expiresAt})`);
      return new Date(at).toISOString();
    }
    return this.deps.messageTtlMs === undefined ? undefined : new Date(now + this.deps.messageTtlMs).toISOString();
  }

  private async contentOf(deviceId: string, outboxId: string, input: SendInput): Promise<QueuedContent> {
    switch (input.kind) {
      case 'text':
        return {
          kind: 'text',
          text: input.text,
          ...(input.backgroundColor === undefined ? {} : { backgroundColor: input.backgroundColor }),
          ...(input.font === undefined ? {} : { font: input.font }),
        };
      case 'location':
        return {
          kind: 'location',
          latitude: input.latitude,
          longitude: input.longitude,
          ...defined({ name: input.name, address: input.address }),
        };
      case 'link':
        // A preview only when asked for (`preview: true`): recorded explicitly, since an engine may default otherwise.
        return {
          kind: 'link',
          url: input.url,
          text: textWithUrl(input.text ?? '', input.url),
          preview: input.preview === true,
        };
      case 'reaction':
        return this.reactionOf(deviceId, input);
      case 'contact':
        return { kind: 'contact', contacts: input.contacts };
      case 'poll':
        // The poll's message secret: its votes are encrypted with it (made here, so that deciding stays pure).
        return {
          kind: 'poll',
          question: input.question,
          options: input.options,
          multipleAnswers: input.multipleAnswers === true,
          secret: randomBytes(32).toString('base64'),
        };
      case 'forward':
        return { kind: 'forward', content: await this.forwardedContentOf(deviceId, outboxId, input.messageId) };
      case 'sticker': {
        const source = await this.deps.intake.accept(
          deviceId,
          outboxId,
          'sticker',
          input.media,
          defined({ mimetype: input.mimetype }),
        );
        return { kind: 'sticker', media: source };
      }
      default: {
        const source = await this.deps.intake.accept(
          deviceId,
          outboxId,
          input.kind,
          input.media,
          defined({ mimetype: input.mimetype, filename: input.filename }),
        );
        if (input.kind === 'audio')
          return { kind: 'audio', media: source, ...(input.ptt === undefined ? {} : { ptt: input.ptt }) };
        return { kind: input.kind, media: source, ...defined({ caption: input.caption }) };
      }
    }
  }

  /** The quoted message: one the device has seen in the same chat. */
  private replyTargetOf(deviceId: string, chatId: string, waMessageId: string): ReplyTarget {
    const seen = this.deps.seen?.quoted
      ? this.deps.seen.quoted(deviceId, waMessageId)
      : this.deps.seen?.find(deviceId, waMessageId);
    if (!seen || seen.chatId !== chatId)
      throw new DomainError('message_not_found', `no message ${waMessageId} was seen in the chat with ${chatId}`);
    return { waMessageId, fromMe: seen.fromMe, from: seen.from, type: seen.type, body: seen.body };
  }

  /** The content of a message to forward, with its own copy of the media (the original's may go away). */
  private async forwardedContentOf(deviceId: string, outboxId: string, waMessageId: string): Promise<ForwardedContent> {
    const seen = this.deps.seen?.find(deviceId, waMessageId);
    if (!seen) throw messageNotFound(waMessageId);
    if (seen.revoked) throw new DomainError('not_forwardable', 'the message was deleted for everyone');
    if (seen.content) return this.forwardSent(deviceId, outboxId, seen.content, seen);
    return this.forwardReceived(deviceId, outboxId, seen);
  }

  private async forwardSent(
    deviceId: string,
    outboxId: string,
    content: QueuedContent,
    seen: SeenMessage,
  ): Promise<ForwardedContent> {
    const inner = content.kind === 'forward' ? content.content : content;
    switch (inner.kind) {
      case 'text':
      case 'location':
      case 'link':
      case 'contact':
        return inner;
      case 'image':
      case 'video':
      case 'audio':
      case 'file':
      case 'sticker': {
        if (inner.media.source === 'url') return inner; // fetched again when sent
        // The original's bytes: in the outbox while it waits, then kept with the received media once sent (the
        // move is a rename, or a copy renamed into place before the outbox file goes: one of the two is there).
        const { media } = this.deps;
        const copied =
          (await media.copyIn(media.pathOf(deviceId, seen.outboxId!), deviceId, outboxId)) ||
          (await media.copyIn(media.keptPathOf(deviceId, seen.waMessageId), deviceId, outboxId));
        if (!copied)
          throw new DomainError(
            'media_expired',
            'the media of this message is not kept (it was not sent, or its retention period is over)',
          );
        return inner;
      }
      default:
        throw new DomainError('not_forwardable', `a ${inner.kind} message cannot be forwarded`);
    }
  }

  private async forwardReceived(deviceId: string, outboxId: string, seen: SeenMessage): Promise<ForwardedContent> {
    switch (seen.type) {
      case 'text':
        return { kind: 'text', text: seen.body };
      case 'link':
        return { kind: 'text', text: seen.body };
      case 'location': {
        const location = seen.received?.location;
        if (!location) break;
        return { kind: 'location', ...location };
      }
      case 'contact': {
        const contacts = seen.received?.contacts?.filter((c) => c.phone !== '');
        if (!contacts?.length) break;
        return { kind: 'contact', contacts };
      }
      case 'image':
      case 'video':
      case 'audio':
      case 'file':
      case 'sticker': {
        const media = seen.media;
        const path = this.deps.receivedMediaPath?.(deviceId, seen.waMessageId);
        if (!media || media.status !== 'ready' || !path || !(await this.deps.media.copyIn(path, deviceId, outboxId))) {
          throw new DomainError('media_expired', 'the media of this message was not kept or is no longer kept');
        }
        const source: MediaSource = {
          source: 'stored',
          mimetype: media.mimetype,
          size: media.size ?? 0,
          ...(media.filename ? { filename: media.filename } : {}),
        };
        if (seen.type === 'sticker') return { kind: 'sticker', media: source };
        if (seen.type === 'audio') return { kind: 'audio', media: source };
        return { kind: seen.type, media: source, ...(seen.body ? { caption: seen.body } : {}) };
      }
    }
    throw new DomainError('not_forwardable', `a ${seen.type} message cannot be forwarded`);
  }

  /**
   * In a group WhatsApp shows a reaction to the target's author only when it names them: the author is looked
   * up now and recorded as `sender` (none for our own messages: the engine names the account).
   */
  private async reactionOf(
    deviceId: string,
    input: Extract<SendInput, { kind: 'reaction' }>,
  ): Promise<Extract<QueuedContent, { kind: 'reaction' }>> {
    const sentHere = await this.sentByThisDevice(deviceId, input.messageId);
    const reaction = { kind: 'reaction' as const, messageId: input.messageId, emoji: input.emoji, fromMe: sentHere };
    if (sentHere || !input.to.endsWith('@g.us')) return reaction;
    const seen = this.deps.seen;
    const target = seen?.quoted ? seen.quoted(deviceId, input.messageId) : seen?.find(deviceId, input.messageId);
    if (!target || target.chatId !== input.to) return reaction;
    // Sent from the phone: ours all the same.
    if (target.fromMe) return { ...reaction, fromMe: true };
    return target.from ? { ...reaction, sender: target.from } : reaction;
  }

  /** WhatsApp addresses a reaction's target by who sent it: ours if the outbox ever had that id. */
  private async sentByThisDevice(deviceId: string, waMessageId: string): Promise<boolean> {
    const outbox = await this.deps.outboxes.get(deviceId);
    return (
      outbox.current.byWaMessageId(waMessageId) !== undefined ||
      this.deps.outboxView.byWaMessageId(deviceId, waMessageId) !== undefined
    );
  }

  private async removeMedia(deviceId: string, messages: PendingMessage[]): Promise<void> {
    await Promise.all(
      messages
        .filter((m) => mediaOf(m.content)?.source === 'stored')
        .map((m) => this.deps.media.remove(deviceId, m.outboxId).catch(() => undefined)),
    );
  }
}

/** What identifies a request for its Idempotency-Key: the fields, with the media reduced to a digest. */
function requestDigest(input: SendInput): unknown {
  if (!('media' in input)) return input;
  const { media, ...fields } = input;
  const digest =
    media.from === 'url'
      ? { url: media.url }
      : media.from === 'base64'
        ? { base64: createHash('sha256').update(media.text).digest('base64url') }
        : media.from === 'spooled'
          ? { base64: media.textDigest }
          : { upload: media.sha256, size: media.size, filename: media.filename };
  return { ...fields, media: digest };
}

function defined<T extends Record<string, string | undefined>>(fields: T): Partial<Record<keyof T, string>> {
  const out: Partial<Record<keyof T, string>> = {};
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) out[name as keyof T] = value;
  return out;
}
