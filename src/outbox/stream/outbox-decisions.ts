/**
 * What the outbox decides, as pure functions of its state: each returns the events to append and the
 * answer, or throws a DomainError to refuse. DeviceOutbox.execute runs them one at a time per device.
 */
import { DomainError } from '../../errors/domain-error.js';
import type { MessageStatusChangedData } from '../../messages/message-events.js';
import { statusEventId } from '../../actors/message-sink.js';
import type { Receipt } from '../../engines/engine.js';
import type { Decide, OutboxNewEvent } from './device-outbox.js';
import { nextStatus } from './message-status.js';
import type {
  OutboxError,
  OutboxEvent,
  OutboxMessageQueuedData,
  QueuedAnswer,
  QueuedContent,
} from './outbox-events.js';
import type { OutboxState, PendingMessage, PendingRevoke } from './outbox-state.js';

const unixSeconds = (epochMs: number) => Math.floor(epochMs / 1000);

export interface NewMessage {
  outboxId: string;
  waMessageId: string;
  to: string;
  content: QueuedContent;
  createdAt: string;
  idempotency?: { key: string; fingerprint: string };
  expiresAt?: string;
}

/** A queued message past its expiresAt (one being sent is let finish: the network may have it). */
export const isExpired = (message: PendingMessage, now: number): boolean =>
  message.status === 'queued' && message.expiresAt !== undefined && Date.parse(message.expiresAt) <= now;

const expiredError = (message: PendingMessage) => ({
  code: 'expired',
  message: `not sent before its expiresAt (${message.expiresAt})`,
});

/**
 * The send repeats an Idempotency-Key the outbox recorded (within its time to live): nothing is queued, and
 * the caller answers what the first request was answered. Decided on the stream's state, so a repeat that
 * reached another process at the same time is recognised when its append is refused and decided again.
 */
export class RepeatedSend extends Error {
  override readonly name = 'RepeatedSend';
  constructor(readonly answer: QueuedAnswer) {
    super('the Idempotency-Key was already used for this request');
  }
}

/** `legacyFingerprint`: the request's fingerprint as keys recorded before fingerprints were canonical have it (src/outbox/commands/idempotency-keys.ts). */
export function queueMessage(
  deviceId: string,
  message: NewMessage,
  idempotencyTtlMs = Number.POSITIVE_INFINITY,
  legacyFingerprint?: string,
): Decide<OutboxMessageQueuedData> {
  return (state) => {
    const known = message.idempotency && state.keys.get(message.idempotency.key);
    if (known && known.at >= Date.parse(message.createdAt) - idempotencyTtlMs) {
      if (known.fingerprint !== message.idempotency!.fingerprint && known.fingerprint !== legacyFingerprint) {
        throw new DomainError(
          'idempotency_key_reused',
          'this Idempotency-Key was already used with a different request; use a new key for a new request',
        );
      }
      throw new RepeatedSend(known.answer);
    }
    const data: OutboxMessageQueuedData = { deviceId, ...message, seq: state.lastSeq + 1 };
    return { events: [{ type: 'OutboxMessageQueued', data }], result: data };
  };
}

function statusEvent(
  deviceId: string,
  message: { waMessageId: string; to: string; outboxId?: string },
  status: MessageStatusChangedData['status'],
  at: number,
  error?: OutboxError,
): OutboxEvent {
  return {
    type: 'MessageStatusChanged',
    data: {
      deviceId,
      waMessageId: message.waMessageId,
      status,
      recipient: message.to,
      ...(message.outboxId === undefined ? {} : { outboxId: message.outboxId }),
      timestamp: unixSeconds(at),
      ...(error ? { error } : {}),
    },
  };
}

/** DELETE /outbox/:outboxId and DELETE /send of a queued message. */
export function cancelMessage(
  deviceId: string,
  find: (state: OutboxState) => PendingMessage | undefined,
  now: number,
): Decide<PendingMessage> {
  return (state) => {
    const message = find(state);
    if (!message) throw new DomainError('not_found', 'no such message in the outbox');
    if (message.status === 'sending')
      throw new DomainError('message_sending', 'the message is being sent right now and can no longer be removed');
    return { events: [statusEvent(deviceId, message, 'cancelled', now)], result: message };
  };
}

/** DELETE /outbox: every queued message; those being sent stay. */
export function clearOutbox(deviceId: string, now: number): Decide<PendingMessage[]> {
  return (state) => {
    const removed = [...state.messages.values()].filter((m) => m.status === 'queued');
    return { events: removed.map((m) => statusEvent(deviceId, m, 'cancelled', now)), result: removed };
  };
}

/** The device is gone: everything pending is cancelled (nothing will send it any more). */
export function dropOutbox(deviceId: string, now: number): Decide<PendingMessage[]> {
  return (state) => {
    const dropped = [...state.messages.values()];
    const error = { code: 'device_deleted', message: 'the device was deleted' };
    const events = dropped.map((m) => statusEvent(deviceId, m, 'cancelled', now, error));
    for (const revoke of state.revokes.values()) {
      events.push({
        type: 'OutboxRevokeFailed',
        data: { deviceId, waMessageId: revoke.waMessageId, error, final: true, attempt: revoke.attempts, retryAt: 0 },
      });
    }
    return { events, result: dropped };
  };
}

/** Every queued message past its expiresAt is `expired`, a final status (the OutboxExpiry sweep). */
export function expireMessages(deviceId: string, now: number): Decide<PendingMessage[]> {
  return (state) => {
    const expired = [...state.messages.values()].filter((message) => isExpired(message, now));
    return { events: expired.map((m) => statusEvent(deviceId, m, 'expired', now, expiredError(m))), result: expired };
  };
}

export type SendStart =
  | { action: 'send'; message: PendingMessage }
  | { action: 'confirm'; message: PendingMessage }
  /** Its time ran out before it could go: recorded `expired` instead of sent late. */
  | { action: 'expired'; message: PendingMessage }
  | { action: 'skip' };

/**
 * Before the engine is asked: record the try (docs/architecture.md, invariant 2). A message a receipt already confirmed (its
 * `sent` was lost to a crash) is recorded sent instead of being sent again.
 */
export function startSending(deviceId: string, outboxId: string, now: number): Decide<SendStart> {
  return (state) => {
    const message = state.messages.get(outboxId);
    if (!message) return { events: [], result: { action: 'skip' } };
    if (message.confirmed)
      return { events: [statusEvent(deviceId, message, 'sent', now)], result: { action: 'confirm', message } };
    if (isExpired(message, now))
      return {
        events: [statusEvent(deviceId, message, 'expired', now, expiredError(message))],
        result: { action: 'expired', message },
      };
    const event: OutboxEvent = {
      type: 'OutboxMessageSending',
      data: { deviceId, outboxId, waMessageId: message.waMessageId, attempt: message.attempts + 1, startedAt: now },
    };
    return { events: [event], result: { action: 'send', message } };
  };
}

export function recordSent(deviceId: string, outboxId: string, now: number): Decide<boolean> {
  return (state) => {
    const message = state.messages.get(outboxId);
    if (!message) return { events: [], result: false };
    return { events: [statusEvent(deviceId, message, 'sent', now)], result: true };
  };
}

export function recordFailed(deviceId: string, outboxId: string, error: OutboxError, now: number): Decide<boolean> {
  return (state) => {
    const message = state.messages.get(outboxId);
    if (!message) return { events: [], result: false };
    return { events: [statusEvent(deviceId, message, 'failed', now, error)], result: true };
  };
}

export function recordAttemptFailed(
  deviceId: string,
  outboxId: string,
  failure: { error: OutboxError; counted: boolean; retryAt: number },
): Decide<boolean> {
  return (state) => {
    const message = state.messages.get(outboxId);
    if (!message) return { events: [], result: false };
    const event: OutboxEvent = {
      type: 'OutboxAttemptFailed',
      data: { deviceId, outboxId, waMessageId: message.waMessageId, attempt: message.attempts, ...failure },
    };
    return { events: [event], result: true };
  };
}

/**
 * A receipt from the engine, recorded with the message's outboxId when the outbox sent it. Repeats are
 * dropped (recent ones by the state, older ones because the message already has that status or a later
 * one), and the event id is derived from the receipt, as the default message sink does.
 */
export function recordReceipt(
  deviceId: string,
  receipt: Receipt,
  known: (waMessageId: string) => { outboxId: string; status: string } | undefined,
): Decide<boolean> {
  return (state) => {
    if (state.hasRecentReceipt(receipt.waMessageId, receipt.status)) return { events: [], result: false };
    const pending = state.byWaMessageId(receipt.waMessageId);
    const record = pending ? undefined : (state.recentlyLeftMessage(receipt.waMessageId) ?? known(receipt.waMessageId));
    if (record && nextStatus(record.status, receipt.status) === record.status) return { events: [], result: false };
    const outboxId = pending?.outboxId ?? record?.outboxId;
    const event: OutboxNewEvent = {
      id: statusEventId(deviceId, receipt.waMessageId, receipt.status),
      type: 'MessageStatusChanged',
      data: {
        deviceId,
        waMessageId: receipt.waMessageId,
        status: receipt.status,
        recipient: receipt.recipient,
        ...(outboxId === undefined ? {} : { outboxId }),
        timestamp: receipt.timestamp,
        ...(receipt.error ? { error: receipt.error } : {}),
      },
    };
    return { events: [event], result: true };
  };
}

export function requestRevoke(
  deviceId: string,
  target: { waMessageId: string; to: string; outboxId?: string },
): Decide<'requested' | 'already'> {
  return (state) => {
    if (state.revokes.has(target.waMessageId)) return { events: [], result: 'already' };
    return { events: [{ type: 'OutboxRevokeRequested', data: { deviceId, ...target } }], result: 'requested' };
  };
}

export function recordRevoked(deviceId: string, waMessageId: string, now: number): Decide<boolean> {
  return (state) => {
    const revoke = state.revokes.get(waMessageId);
    if (!revoke) return { events: [], result: false };
    return { events: [statusEvent(deviceId, revoke, 'deleted', now)], result: true };
  };
}

export function recordRevokeFailed(
  deviceId: string,
  waMessageId: string,
  failure: { error: OutboxError; final: boolean; retryAt: number; counted: boolean },
): Decide<boolean> {
  return (state) => {
    const revoke: PendingRevoke | undefined = state.revokes.get(waMessageId);
    if (!revoke) return { events: [], result: false };
    const attempt = revoke.attempts + (failure.counted ? 1 : 0);
    const event: OutboxEvent = {
      type: 'OutboxRevokeFailed',
      data: { deviceId, waMessageId, error: failure.error, final: failure.final, attempt, retryAt: failure.retryAt },
    };
    return { events: [event], result: true };
  };
}
