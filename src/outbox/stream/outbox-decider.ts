/**
 * The decider of a device's outbox stream (`outbox-<deviceId>`): one command union, a pure `decide` that
 * answers the events and the caller's result (an Idempotency-Key used already, a record to look up first;
 * refusals are DomainErrors), and a pure `evolve` on a copy. What is random, timed or read elsewhere comes in
 * the command. The writer, DeviceOutbox, folds events into its one state in place instead (the backlog can be
 * large). docs/architecture.md, "Commands".
 */
import type { AnsweringDecider, Decision } from '../../commands/decider.js';
import { DomainError } from '../../errors/domain-error.js';
import { deterministicEventId } from '../../eventstore/event-id.js';
import type { MessageStatusChangedData } from '../../messages/message-events.js';
import type { Receipt } from '../../engines/engine.js';
import { nextStatus } from './message-status.js';
import {
  OUTBOX_EVENT_TYPES,
  type OutboxError,
  type OutboxMessageQueuedData,
  type OutboxNewEvent,
  type QueuedAnswer,
  type QueuedContent,
} from './outbox-events.js';
import { OutboxState, type PendingMessage, isEditable } from './outbox-state.js';
import { type PacingContext, type PacingReason, pacingWindow } from '../pacing/pacing.js';

/** WhatsApp lets a sent message be edited this long. */
export const EDIT_WINDOW_MS = 15 * 60_000;

export interface NewMessage {
  outboxId: string;
  waMessageId: string;
  to: string;
  content: QueuedContent;
  createdAt: string;
  idempotency?: { key: string; fingerprint: string };
  expiresAt?: string;
}

/** A message that left the outbox, as the outbox read model has it (OutboxReadModel.byWaMessageId). */
export interface SentRecord {
  outboxId: string;
  to: string;
  status: string;
}

/** A message an edit names, as the message index has it (SeenMessages.find). */
export interface SeenRecord {
  chatId: string;
  fromMe: boolean;
  outboxId?: string;
  content?: QueuedContent;
  status?: string;
  /** Unix seconds. */
  sentAt?: number;
  revoked: boolean;
}

/**
 * What the unanswered limit needs of a recipient: whether it ever wrote to the account, and how many messages the
 * message index counts sent (or queued) to it, counted once the index held the outbox up to `countedUpToSeq`.
 * The index lags the log: the decider adds the messages to the recipient its own state queued after that seq, so
 * that concurrent sends (decided one after another on the stream) cannot pass the limit together.
 */
export interface UnansweredCount {
  limit: number;
  answered: boolean;
  sent: number;
  countedUpToSeq: number;
}

/**
 * A command that needs a record from elsewhere carries it once looked up: `undefined`, not looked up yet
 * (it is looked up only when the stream's state does not settle the command, which it mostly does);
 * `null`, looked up and not there.
 */
type LookedUp<T> = T | null | undefined;

export type OutboxCommand =
  /**
   * A send. `idempotencyTtlMs`: how long a recorded Idempotency-Key holds; `legacyFingerprint`: the request's
   * fingerprint as keys recorded before fingerprints were canonical have it (src/outbox/commands/idempotency-keys.ts).
   */
  | {
      type: 'QueueMessage';
      deviceId: string;
      message: NewMessage;
      idempotencyTtlMs?: number;
      legacyFingerprint?: string;
      /** Pacing's unansweredLimit with what the message index knows of the recipient (UnansweredCount). Absent: no limit. */
      unanswered?: UnansweredCount;
    }
  /** DELETE /outbox/:outboxId: a queued message, by its outboxId. */
  | { type: 'CancelMessage'; deviceId: string; outboxId: string; now: number }
  /** DELETE /outbox: every queued message; those being sent stay. */
  | { type: 'ClearOutbox'; deviceId: string; now: number }
  /** The device is gone: everything pending is cancelled (nothing will send it any more). */
  | { type: 'DropOutbox'; deviceId: string; now: number }
  /** Every queued message past its expiresAt is `expired`, a final status (the OutboxExpiry sweep). */
  | { type: 'ExpireMessages'; deviceId: string; now: number }
  /**
   * The drainer, before the engine is asked: records the try (docs/architecture.md, invariant 2). `pacing`: the
   * device's pacing and what it needs to know of the recipient; a first try outside the window is deferred.
   */
  | { type: 'StartSending'; deviceId: string; outboxId: string; now: number; pacing?: PacingContext }
  /**
   * The drainer, when its own look at the pacing window said "not now": records the deferral (once) and never
   * starts a try, so a window that opened meanwhile answers `go` and the try is made through the lane's rate
   * limiter like any other (StartSending would send it outside it).
   */
  | { type: 'DeferSending'; deviceId: string; outboxId: string; now: number; pacing: PacingContext }
  | { type: 'RecordSent'; deviceId: string; outboxId: string; now: number }
  | { type: 'RecordFailed'; deviceId: string; outboxId: string; error: OutboxError; now: number }
  | {
      type: 'RecordAttemptFailed';
      deviceId: string;
      outboxId: string;
      error: OutboxError;
      counted: boolean;
      retryAt: number;
    }
  /** A receipt from the engine; `sent`: the outbox read model's record of the message. */
  | { type: 'RecordReceipt'; deviceId: string; receipt: Receipt; sent?: LookedUp<SentRecord> }
  | { type: 'RequestRevoke'; deviceId: string; waMessageId: string; to: string; outboxId?: string }
  | { type: 'RecordRevoked'; deviceId: string; waMessageId: string; now: number }
  | {
      type: 'RecordRevokeFailed';
      deviceId: string;
      waMessageId: string;
      error: OutboxError;
      final: boolean;
      retryAt: number;
      counted: boolean;
    }
  /** DELETE /send/:waMessageId: a message still waiting is cancelled, a sent one revoked for everyone. */
  | { type: 'DeleteMessage'; deviceId: string; waMessageId: string; now: number; sent?: LookedUp<SentRecord> }
  /**
   * PATCH /send/:waMessageId: a queued message gets its new text before it goes; a sent one is edited for
   * everyone by queuing an edit (`edit`: the ids and time of that edit message, made by the caller).
   */
  | {
      type: 'EditMessage';
      deviceId: string;
      waMessageId: string;
      text: string;
      now: number;
      edit: { outboxId: string; waMessageId: string; createdAt: string };
      seen?: LookedUp<SeenRecord>;
    };

export type OutboxCommandType = OutboxCommand['type'];

/** The caller must look a record up (the command's `sent` or `seen`) and send the command again with it. */
export type NeedsLookUp = { kind: 'look-up' };

export type QueueResult =
  | { kind: 'queued'; message: OutboxMessageQueuedData }
  /**
   * The send repeats an Idempotency-Key the outbox recorded (within its time to live): nothing is queued, and
   * the caller answers what the first request was answered. Decided on the stream's state, so a repeat that
   * reached another process at the same time is recognised when its append is refused and decided again.
   */
  | { kind: 'repeated'; answer: QueuedAnswer };

export type SendStart =
  | { action: 'send'; message: PendingMessage }
  | { action: 'confirm'; message: PendingMessage }
  /** Its time ran out before it could go: recorded `expired` instead of sent late. */
  | { action: 'expired'; message: PendingMessage }
  /** Pacing holds it (a day's cap, quiet hours): it stays queued until `until` (epoch ms). */
  | { action: 'defer'; message: PendingMessage; until: number; reason: PacingReason }
  | { action: 'skip' };

/** `go`: nothing holds the message (or it is gone or tried already); the caller tries it the usual way. */
export type DeferOutcome = { action: 'go' } | { action: 'defer'; until: number; reason: PacingReason };

export type EditOutcome = { status: 'edited' } | { status: 'editing' };

export type DeleteOutcome = { status: 'cancelled' } | { status: 'deleting' } | { status: 'deleted' };

/** What each command answers its caller. */
export interface OutboxResults {
  QueueMessage: QueueResult;
  /** The message cancelled. */
  CancelMessage: PendingMessage;
  ClearOutbox: PendingMessage[];
  DropOutbox: PendingMessage[];
  ExpireMessages: PendingMessage[];
  StartSending: SendStart;
  DeferSending: DeferOutcome;
  /** Whether the message was still pending (false: nothing to record). */
  RecordSent: boolean;
  RecordFailed: boolean;
  RecordAttemptFailed: boolean;
  /** `repeat`: the message already has that status or a later one. */
  RecordReceipt: { kind: 'recorded' } | { kind: 'repeat' } | NeedsLookUp;
  RequestRevoke: 'requested' | 'already';
  RecordRevoked: boolean;
  RecordRevokeFailed: boolean;
  DeleteMessage: { kind: 'decided'; outcome: DeleteOutcome; cancelled?: PendingMessage } | NeedsLookUp;
  EditMessage: { kind: 'decided'; outcome: EditOutcome } | NeedsLookUp;
}

export type OutboxResultOf<C extends OutboxCommand> = OutboxResults[C['type']];
export type OutboxResult = OutboxResults[OutboxCommandType];
export type OutboxDecision<C extends OutboxCommand = OutboxCommand> = Decision<OutboxNewEvent, OutboxResultOf<C>>;

/**
 * The id of a receipt's MessageStatusChanged, derived from the receipt (device ids cannot contain '/', so the
 * joined name is unambiguous): an engine that reports it twice, or an append tried again, records it once.
 */
export const statusEventId = (deviceId: string, waMessageId: string, status: string): string =>
  deterministicEventId(`${deviceId}/${waMessageId}/${status}`);

const LOOK_UP: NeedsLookUp = { kind: 'look-up' };
const SENT_STATUSES: ReadonlySet<string> = new Set(['sent', 'delivered', 'read', 'played']);
const unixSeconds = (epochMs: number) => Math.floor(epochMs / 1000);

/** A queued message past its expiresAt (one being sent is let finish: the network may have it). */
const isExpired = (message: PendingMessage, now: number): boolean =>
  message.status === 'queued' && message.expiresAt !== undefined && Date.parse(message.expiresAt) <= now;

const expiredError = (message: PendingMessage) => ({
  code: 'expired',
  message: `not sent before its expiresAt (${message.expiresAt})`,
});

const notSent = (waMessageId: string) =>
  new DomainError('not_found', `no message ${waMessageId} was sent from this device`);

function statusEvent(
  deviceId: string,
  message: { waMessageId: string; to: string; outboxId?: string },
  status: MessageStatusChangedData['status'],
  at: number,
  error?: OutboxError,
): OutboxNewEvent {
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

/** Messages to `to` still in the outbox that were queued after `seq` (those the message index did not count). */
function queuedAfter(state: OutboxState, to: string, seq: number): number {
  let count = 0;
  for (const message of state.messages.values()) if (message.seq > seq && message.to === to) count++;
  return count;
}

function queue(
  state: OutboxState,
  command: Extract<OutboxCommand, { type: 'QueueMessage' }>,
): Decision<OutboxNewEvent, QueueResult> {
  const { deviceId, message, idempotencyTtlMs = Number.POSITIVE_INFINITY, legacyFingerprint } = command;
  const known = message.idempotency && state.keys.get(message.idempotency.key);
  if (known && known.at >= Date.parse(message.createdAt) - idempotencyTtlMs) {
    if (known.fingerprint !== message.idempotency!.fingerprint && known.fingerprint !== legacyFingerprint) {
      throw new DomainError(
        'idempotency_key_reused',
        'this Idempotency-Key was already used with a different request; use a new key for a new request',
      );
    }
    return { events: [], result: { kind: 'repeated', answer: known.answer } };
  }
  const { unanswered } = command;
  if (unanswered && !unanswered.answered) {
    const sent = unanswered.sent + queuedAfter(state, message.to, unanswered.countedUpToSeq);
    if (sent >= unanswered.limit) {
      throw new DomainError(
        'recipient_unresponsive',
        `${message.to} never wrote to this account and was sent ${sent} messages already (the unansweredLimit is ${unanswered.limit}); nothing was queued`,
      );
    }
  }
  const data: OutboxMessageQueuedData = { deviceId, ...message, seq: state.lastSeq + 1 };
  return { events: [{ type: 'OutboxMessageQueued', data }], result: { kind: 'queued', message: data } };
}

function cancel(deviceId: string, message: PendingMessage | undefined, now: number) {
  if (!message) throw new DomainError('not_found', 'no such message in the outbox');
  if (message.status === 'sending')
    throw new DomainError('message_sending', 'the message is being sent right now and can no longer be removed');
  return { events: [statusEvent(deviceId, message, 'cancelled', now)], result: message };
}

/**
 * A receipt, recorded with the message's outboxId when the outbox sent it. Repeats are dropped (recent ones
 * by the state, older ones because the message already has that status or a later one), and the event id is
 * derived from the receipt, so that a retried append records it once.
 */
function receipt(
  state: OutboxState,
  command: Extract<OutboxCommand, { type: 'RecordReceipt' }>,
): Decision<OutboxNewEvent, OutboxResults['RecordReceipt']> {
  const { deviceId, receipt } = command;
  if (state.hasRecentReceipt(receipt.waMessageId, receipt.status)) return { events: [], result: { kind: 'repeat' } };
  const pending = state.byWaMessageId(receipt.waMessageId);
  let record: { outboxId: string; status: string } | undefined;
  if (!pending) {
    record = state.recentlyLeftMessage(receipt.waMessageId);
    if (!record) {
      if (command.sent === undefined) return { events: [], result: LOOK_UP };
      record = command.sent ?? undefined;
    }
  }
  if (record && nextStatus(record.status, receipt.status) === record.status)
    return { events: [], result: { kind: 'repeat' } };
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
  return { events: [event], result: { kind: 'recorded' } };
}

function requestRevoke(
  state: OutboxState,
  target: { deviceId: string; waMessageId: string; to: string; outboxId?: string },
) {
  const { deviceId, waMessageId, to, outboxId } = target;
  if (state.revokes.has(waMessageId)) return { events: [], result: 'already' as const };
  const event: OutboxNewEvent = {
    type: 'OutboxRevokeRequested',
    data: { deviceId, waMessageId, to, ...(outboxId === undefined ? {} : { outboxId }) },
  };
  return { events: [event], result: 'requested' as const };
}

function deleteMessage(
  state: OutboxState,
  command: Extract<OutboxCommand, { type: 'DeleteMessage' }>,
): Decision<OutboxNewEvent, OutboxResults['DeleteMessage']> {
  const { deviceId, waMessageId } = command;
  const pending = state.byWaMessageId(waMessageId);
  if (pending) {
    const cancelled = cancel(deviceId, pending, command.now);
    return {
      events: cancelled.events,
      result: { kind: 'decided', outcome: { status: 'cancelled' }, cancelled: pending },
    };
  }
  if (command.sent === undefined) return { events: [], result: LOOK_UP };
  const record = command.sent;
  if (!record) throw notSent(waMessageId);
  const decided = (status: DeleteOutcome['status']) => ({ kind: 'decided' as const, outcome: { status } });
  if (state.revokes.has(waMessageId)) return { events: [], result: decided('deleting') };
  switch (record.status) {
    case 'cancelled':
      return { events: [], result: decided('cancelled') };
    case 'deleted':
      return { events: [], result: decided('deleted') };
    case 'failed':
      throw new DomainError('message_failed', 'the message failed and was never sent: there is nothing to delete');
    case 'expired':
      throw new DomainError('message_failed', 'the message expired and was never sent: there is nothing to delete');
    case 'queued':
    case 'sending':
      // It left the outbox a moment ago and its outcome is not readable yet.
      throw new DomainError('message_sending', 'the message is being sent right now; try again in a moment');
  }
  if (!SENT_STATUSES.has(record.status)) throw notSent(waMessageId);
  const revoke = requestRevoke(state, { deviceId, waMessageId, to: record.to, outboxId: record.outboxId });
  return { events: revoke.events, result: decided('deleting') };
}

function edit(
  state: OutboxState,
  command: Extract<OutboxCommand, { type: 'EditMessage' }>,
): Decision<OutboxNewEvent, OutboxResults['EditMessage']> {
  const { deviceId, waMessageId, text, now } = command;
  const pending = state.byWaMessageId(waMessageId);
  if (pending) {
    if (pending.status === 'sending')
      throw new DomainError('not_editable', 'the message is being sent right now; edit it once it is sent');
    if (!isEditable(pending.content))
      throw new DomainError('not_editable', `a ${pending.content.kind} message has no text to edit`);
    return {
      events: [{ type: 'OutboxMessageEdited', data: { deviceId, outboxId: pending.outboxId, waMessageId, text } }],
      result: { kind: 'decided', outcome: { status: 'edited' } },
    };
  }
  if (command.seen === undefined) return { events: [], result: LOOK_UP };
  const seen = command.seen;
  if (!seen) throw new DomainError('message_not_found', `no message ${waMessageId} was seen by this device`);
  if (!seen.fromMe || !seen.outboxId || !seen.content)
    throw new DomainError('not_editable', 'only messages this device sent can be edited');
  if (!isEditable(seen.content))
    throw new DomainError('not_editable', `a ${seen.content.kind} message has no text to edit`);
  if (seen.revoked || !seen.status || !SENT_STATUSES.has(seen.status) || seen.sentAt === undefined) {
    throw new DomainError(
      'not_editable',
      `the message is ${seen.status ?? 'unknown'}: only sent messages can be edited`,
    );
  }
  if (now - seen.sentAt * 1000 > EDIT_WINDOW_MS)
    throw new DomainError('not_editable', 'WhatsApp allows edits only within 15 minutes of sending');
  const queued = queue(state, {
    type: 'QueueMessage',
    deviceId,
    message: { ...command.edit, to: seen.chatId, content: { kind: 'edit', messageId: waMessageId, text } },
  });
  return { events: queued.events, result: { kind: 'decided', outcome: { status: 'editing' } } };
}

/**
 * The deferral pacing asks for a first try at `now`, recorded once per window (a repeat of the deferral the stream
 * holds records nothing); undefined: the window is open.
 */
function deferral(
  state: OutboxState,
  deviceId: string,
  pacing: PacingContext,
  now: number,
): Decision<OutboxNewEvent, { action: 'defer'; until: number; reason: PacingReason }> | undefined {
  const verdict = pacingWindow(pacing, now, (since) => state.sendsSince(since));
  if (verdict.go) return undefined;
  const { until, reason } = verdict;
  const known = state.deferral;
  const events: OutboxNewEvent[] =
    known && known.until === until && known.reason === reason
      ? []
      : [{ type: 'OutboxDeferred', data: { deviceId, deferredUntil: new Date(until).toISOString(), reason } }];
  return { events, result: { action: 'defer', until, reason } };
}

function decide(command: OutboxCommand, state: OutboxState): Decision<OutboxNewEvent, OutboxResult> {
  const { deviceId } = command;
  switch (command.type) {
    case 'QueueMessage':
      return queue(state, command);
    case 'CancelMessage':
      return cancel(deviceId, state.messages.get(command.outboxId), command.now);
    case 'ClearOutbox': {
      const removed = [...state.messages.values()].filter((m) => m.status === 'queued');
      return { events: removed.map((m) => statusEvent(deviceId, m, 'cancelled', command.now)), result: removed };
    }
    case 'DropOutbox': {
      const dropped = [...state.messages.values()];
      const error = { code: 'device_deleted', message: 'the device was deleted' };
      const events = dropped.map((m) => statusEvent(deviceId, m, 'cancelled', command.now, error));
      for (const revoke of state.revokes.values()) {
        events.push({
          type: 'OutboxRevokeFailed',
          data: { deviceId, waMessageId: revoke.waMessageId, error, final: true, attempt: revoke.attempts, retryAt: 0 },
        });
      }
      return { events, result: dropped };
    }
    case 'ExpireMessages': {
      const expired = [...state.messages.values()].filter((message) => isExpired(message, command.now));
      const events = expired.map((m) => statusEvent(deviceId, m, 'expired', command.now, expiredError(m)));
      return { events, result: expired };
    }
    case 'StartSending': {
      const { outboxId, now } = command;
      const message = state.messages.get(outboxId);
      if (!message) return { events: [], result: { action: 'skip' } };
      // A receipt already confirmed it (its `sent` was lost to a crash): recorded sent instead of sent again.
      if (message.confirmed)
        return { events: [statusEvent(deviceId, message, 'sent', now)], result: { action: 'confirm', message } };
      if (isExpired(message, now))
        return {
          events: [statusEvent(deviceId, message, 'expired', now, expiredError(message))],
          result: { action: 'expired', message },
        };
      // Pacing judges a message's first try only: a retry is the same send.
      if (command.pacing && message.attempts === 0) {
        const deferred = deferral(state, deviceId, command.pacing, now);
        if (deferred) return { events: deferred.events, result: { ...deferred.result, message } };
      }
      const event: OutboxNewEvent = {
        type: 'OutboxMessageSending',
        data: { deviceId, outboxId, waMessageId: message.waMessageId, attempt: message.attempts + 1, startedAt: now },
      };
      return { events: [event], result: { action: 'send', message } };
    }
    case 'DeferSending': {
      const message = state.messages.get(command.outboxId);
      const deferred =
        message && message.attempts === 0 ? deferral(state, deviceId, command.pacing, command.now) : undefined;
      return deferred ?? { events: [], result: { action: 'go' } };
    }
    case 'RecordSent':
    case 'RecordFailed': {
      const message = state.messages.get(command.outboxId);
      if (!message) return { events: [], result: false };
      const event =
        command.type === 'RecordSent'
          ? statusEvent(deviceId, message, 'sent', command.now)
          : statusEvent(deviceId, message, 'failed', command.now, command.error);
      return { events: [event], result: true };
    }
    case 'RecordAttemptFailed': {
      const { outboxId, error, counted, retryAt } = command;
      const message = state.messages.get(outboxId);
      if (!message) return { events: [], result: false };
      const event: OutboxNewEvent = {
        type: 'OutboxAttemptFailed',
        data: {
          deviceId,
          outboxId,
          waMessageId: message.waMessageId,
          attempt: message.attempts,
          error,
          counted,
          retryAt,
        },
      };
      return { events: [event], result: true };
    }
    case 'RecordReceipt':
      return receipt(state, command);
    case 'RequestRevoke':
      return requestRevoke(state, command);
    case 'RecordRevoked': {
      const revoke = state.revokes.get(command.waMessageId);
      if (!revoke) return { events: [], result: false };
      return { events: [statusEvent(deviceId, revoke, 'deleted', command.now)], result: true };
    }
    case 'RecordRevokeFailed': {
      const { waMessageId, error, final, retryAt, counted } = command;
      const revoke = state.revokes.get(waMessageId);
      if (!revoke) return { events: [], result: false };
      const attempt = revoke.attempts + (counted ? 1 : 0);
      const event: OutboxNewEvent = {
        type: 'OutboxRevokeFailed',
        data: { deviceId, waMessageId, error, final, attempt, retryAt },
      };
      return { events: [event], result: true };
    }
    case 'DeleteMessage':
      return deleteMessage(state, command);
    case 'EditMessage':
      return edit(state, command);
  }
}

export interface OutboxDecider extends AnsweringDecider<OutboxState, OutboxCommand, OutboxNewEvent, OutboxResult> {
  /** Each command's result has its own type (OutboxResults). */
  decide<C extends OutboxCommand>(command: C, state: OutboxState): OutboxDecision<C>;
}

export const outboxDecider: OutboxDecider = {
  eventTypes: OUTBOX_EVENT_TYPES,

  initialState: () => new OutboxState(),

  evolve(state, event) {
    const next = state.clone();
    next.apply(event);
    return next;
  },

  decide: <C extends OutboxCommand>(command: C, state: OutboxState) => decide(command, state) as OutboxDecision<C>,
};
