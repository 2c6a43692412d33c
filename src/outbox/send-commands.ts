/**
 * The commands behind /send and /outbox: queue a message (with its media and Idempotency-Key), cancel
 * or revoke one, remove one or all from the outbox. Each appends to the device's outbox first and
 * answers once the read models include the append (read-your-writes: docs/architecture.md, invariant 4).
 */
import { createHash } from 'node:crypto';
import { textWithUrl } from '../messages/link-text.js';
import { DomainError } from '../errors/domain-error.js';
import { type IdempotencyKeys, fingerprintOf } from './idempotency-keys.js';
import type { MediaInput, MediaIntake } from '../media/media-intake.js';
import type { MediaStore } from '../media/media-store.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import type { Decide } from './device-outbox.js';
import { cancelMessage, clearOutbox, queueMessage, requestRevoke } from './outbox-decisions.js';
import { type MediaKind, type QueuedAnswer, type QueuedContent, answerOf, isMediaKind } from './outbox-events.js';
import type { OutboxReadModel } from './outbox-read-model.js';
import type { PendingMessage } from './outbox-state.js';
import { orderedUuid } from '../eventstore/event-id.js';
import type { Outboxes } from './outboxes.js';

export type SendInput =
  | { kind: 'text'; to: string; text: string }
  | { kind: 'location'; to: string; latitude: number; longitude: number; name?: string; address?: string }
  | { kind: 'link'; to: string; url: string; text?: string; preview?: boolean }
  | { kind: 'reaction'; to: string; messageId: string; emoji: string }
  | { kind: MediaKind; to: string; media: MediaInput; mimetype?: string; caption?: string; filename?: string; ptt?: boolean };

export type DeleteOutcome = { status: 'cancelled' } | { status: 'deleting' } | { status: 'deleted' };

export interface SendCommandsDeps {
  outboxes: Outboxes;
  projections: ReadModelProgress;
  outboxView: OutboxReadModel;
  idempotency: IdempotencyKeys;
  intake: MediaIntake;
  media: MediaStore;
  /** The waMessageId of a new message, in the format WhatsApp clients use. */
  newWaMessageId: () => string;
  now?: () => number;
}

const notSent = (waMessageId: string) => new DomainError('not_found', `no message ${waMessageId} was sent from this device`);

const SENT_STATUSES: ReadonlySet<string> = new Set(['sent', 'delivered', 'read', 'played']);

export class SendCommands {
  private readonly now: () => number;

  constructor(private readonly deps: SendCommandsDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Queues a message; with an Idempotency-Key, a repeated request gets the first answer instead. */
  send(deviceId: string, input: SendInput, idempotencyKey?: string): Promise<QueuedAnswer> {
    if (idempotencyKey === undefined) return this.queue(deviceId, input);
    const fingerprint = fingerprintOf(requestDigest(input));
    return this.deps.idempotency.once(deviceId, idempotencyKey, fingerprint, () => this.queue(deviceId, input, { key: idempotencyKey, fingerprint }));
  }

  /** DELETE /send/:waMessageId: a message still waiting is cancelled, a sent one revoked for everyone. */
  async delete(deviceId: string, waMessageId: string): Promise<DeleteOutcome> {
    const { outboxes, outboxView } = this.deps;
    const now = this.now();
    const decide: Decide<{ outcome: DeleteOutcome; cancelled?: PendingMessage }> = (state) => {
      if (state.byWaMessageId(waMessageId)) {
        const decision = cancelMessage(deviceId, (s) => s.byWaMessageId(waMessageId), now)(state);
        return { events: decision.events, result: { outcome: { status: 'cancelled' }, cancelled: decision.result } };
      }
      const record = outboxView.byWaMessageId(deviceId, waMessageId);
      if (!record) throw notSent(waMessageId);
      if (state.revokes.has(waMessageId)) return { events: [], result: { outcome: { status: 'deleting' } } };
      switch (record.status) {
        case 'cancelled':
          return { events: [], result: { outcome: { status: 'cancelled' } } };
        case 'deleted':
          return { events: [], result: { outcome: { status: 'deleted' } } };
        case 'failed':
          throw new DomainError('message_failed', 'the message failed and was never sent: there is nothing to delete');
        case 'queued':
        case 'sending':
          // It left the outbox a moment ago and its outcome is not readable yet.
          throw new DomainError('message_sending', 'the message is being sent right now; try again in a moment');
      }
      if (!SENT_STATUSES.has(record.status)) throw notSent(waMessageId);
      const revoke = requestRevoke(deviceId, { waMessageId, to: record.to, outboxId: record.outboxId })(state);
      return { events: revoke.events, result: { outcome: { status: 'deleting' } } };
    };
    const { result, position } = await outboxes.execute(deviceId, decide);
    if (result.cancelled) await this.removeMedia(deviceId, [result.cancelled]);
    await this.deps.projections.settle(position);
    return result.outcome;
  }

  /** DELETE /outbox/:outboxId: 404 unless queued, 409 while being sent. */
  async remove(deviceId: string, outboxId: string): Promise<void> {
    const { result, position } = await this.deps.outboxes.execute(deviceId, cancelMessage(deviceId, (s) => s.messages.get(outboxId), this.now()));
    await this.removeMedia(deviceId, [result]);
    await this.deps.projections.settle(position);
  }

  /** DELETE /outbox: every queued message (not those being sent right now). */
  async clear(deviceId: string): Promise<number> {
    const { result, position } = await this.deps.outboxes.execute(deviceId, clearOutbox(deviceId, this.now()));
    await this.removeMedia(deviceId, result);
    await this.deps.projections.settle(position);
    return result.length;
  }

  private async queue(deviceId: string, input: SendInput, idempotency?: { key: string; fingerprint: string }): Promise<QueuedAnswer> {
    const { outboxes, media } = this.deps;
    const outboxId = orderedUuid();
    const content = await this.contentOf(deviceId, outboxId, input);
    const message = {
      outboxId,
      waMessageId: this.deps.newWaMessageId(),
      to: input.to,
      content,
      createdAt: new Date(this.now()).toISOString(),
      ...(idempotency ? { idempotency } : {}),
    };
    let executed;
    try {
      executed = await outboxes.execute(deviceId, queueMessage(deviceId, message));
    } catch (error) {
      if (isMediaKind(input.kind)) await media.remove(deviceId, outboxId);
      throw error;
    }
    await this.deps.projections.settle(executed.position);
    return answerOf(executed.result);
  }

  private async contentOf(deviceId: string, outboxId: string, input: SendInput): Promise<QueuedContent> {
    switch (input.kind) {
      case 'text':
        return { kind: 'text', text: input.text };
      case 'location':
        return { kind: 'location', latitude: input.latitude, longitude: input.longitude, ...defined({ name: input.name, address: input.address }) };
      case 'link':
        // A preview only when asked for (`preview: true`): recorded explicitly, since an engine may default otherwise.
        return { kind: 'link', url: input.url, text: textWithUrl(input.text ?? '', input.url), preview: input.preview === true };
      case 'reaction':
        return { kind: 'reaction', messageId: input.messageId, emoji: input.emoji, fromMe: await this.sentByThisDevice(deviceId, input.messageId) };
      default: {
        const source = await this.deps.intake.accept(deviceId, outboxId, input.kind, input.media, defined({ mimetype: input.mimetype, filename: input.filename }));
        if (input.kind === 'audio') return { kind: 'audio', media: source, ...(input.ptt === undefined ? {} : { ptt: input.ptt }) };
        return { kind: input.kind, media: source, ...defined({ caption: input.caption }) };
      }
    }
  }

  /** WhatsApp addresses a reaction's target by who sent it: ours if the outbox ever had that id. */
  private async sentByThisDevice(deviceId: string, waMessageId: string): Promise<boolean> {
    const outbox = await this.deps.outboxes.get(deviceId);
    return outbox.current.byWaMessageId(waMessageId) !== undefined || this.deps.outboxView.byWaMessageId(deviceId, waMessageId) !== undefined;
  }

  private async removeMedia(deviceId: string, messages: PendingMessage[]): Promise<void> {
    await Promise.all(
      messages.filter((m) => isMediaKind(m.content.kind)).map((m) => this.deps.media.remove(deviceId, m.outboxId).catch(() => undefined)),
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
