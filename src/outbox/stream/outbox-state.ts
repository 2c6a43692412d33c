/**
 * A device's outbox as its stream says, the state of the outbox decider (outbox-decider.ts): the messages not
 * yet accepted by the network (FIFO) and the revokes not yet done. `apply` folds an event into it in place (the
 * writer's fold, DeviceOutbox; the decider's pure evolve applies it to a clone); no I/O. Messages that left the
 * outbox are not kept here (the outbox read model remembers them), so the state stays as small as the backlog.
 */
import { nextStatus } from './message-status.js';
import type { ReplyTarget } from '../../engines/engine.js';
import {
  type OutboxError,
  type OutboxEvent,
  type QueuedAnswer,
  type QueuedContent,
  answerOf,
} from './outbox-events.js';

export interface PendingMessage {
  outboxId: string;
  waMessageId: string;
  to: string;
  seq: number;
  content: QueuedContent;
  createdAt: string;
  /** `sending`: an OutboxMessageSending is the last word on it (a try is under way, or a crash cut it short). */
  status: 'queued' | 'sending';
  /** Tries started. */
  attempts: number;
  /** Tries that failed in a way that uses up an attempt. */
  failures: number;
  lastError?: OutboxError;
  /** Epoch ms before which it is not tried (backoff after a failed try); 0: now. */
  retryAt: number;
  /** A receipt arrived while it was still pending: the network has it, whatever our records missed. */
  confirmed: boolean;
  replyTo?: ReplyTarget;
  mentions?: string[];
  /** A status: the numbers that see it. */
  audience?: string[];
  /** ISO 8601: still queued then, it expires. */
  expiresAt?: string;
}

export interface PendingRevoke {
  waMessageId: string;
  to: string;
  outboxId?: string;
  attempts: number;
  retryAt: number;
  lastError?: OutboxError;
}

export interface OutboxSnapshotState {
  messages: PendingMessage[];
  revokes: PendingRevoke[];
  lastSeq: number;
  /** Start times of the latest tries (absent in snapshots of older versions). */
  starts?: number[];
  /** The latest Idempotency-Keys (absent in snapshots of older versions). */
  keys?: Array<[string, IdempotencyRecord]>;
  /** Start times of the first tries of the last two days (pacing's daily count; absent in older snapshots). */
  firstStarts?: number[];
  /** The latest deferral (pacing; absent in older snapshots). */
  deferral?: Deferral;
}

/** Pacing holds the outbox's next try until `until` (epoch ms). */
export interface Deferral {
  until: number;
  reason: 'daily_cap' | 'quiet_hours';
}

/** A send's Idempotency-Key as the outbox recorded it: decided in the stream, so every process agrees. */
export interface IdempotencyRecord {
  fingerprint: string;
  answer: QueuedAnswer;
  /** Epoch ms the first request was queued. */
  at: number;
}

/** Keys kept per device (the oldest go first); older keys are still found in the idempotency read model. */
const RECENT_KEYS = 5_000;
/**
 * Start times are kept while they may count: those of the last minute, whatever the rate. Older ones are dropped
 * once they are half of those kept (and there are this many), so that a start costs O(1) on average.
 */
const RECENT_STARTS = 2_000;
const RATE_WINDOW_MS = 60_000;
/** First tries are counted for pacing's day (at most 25 h): those of the last two days are kept. */
const DAY_COUNT_WINDOW_MS = 2 * 86_400_000;

const RECEIPTS: ReadonlySet<string> = new Set(['delivered', 'read', 'played']);
/** Receipts come within minutes of a send: this many of the latest per device cover that at any sane rate. */
const RECENT_RECEIPTS = 2_000;
const RECENT_MESSAGES = 2_000;

export class OutboxState {
  /** By outboxId, in FIFO order (a Map keeps insertion order). */
  readonly messages = new Map<string, PendingMessage>();
  /** By waMessageId, oldest request first. */
  readonly revokes = new Map<string, PendingRevoke>();
  private readonly outboxIdByWaId = new Map<string, string>();
  /** `<waMessageId>/<status>` of the latest receipts recorded, to drop repeats (engines report some twice). */
  private readonly recentReceipts = new Set<string>();
  /** The latest messages that left the outbox, with their status: receipts for them need no lookup. */
  private readonly recentlyLeft = new Map<string, { outboxId: string; status: string }>();
  lastSeq = 0;
  /** By Idempotency-Key, oldest first. */
  readonly keys = new Map<string, IdempotencyRecord>();
  /** Epoch ms of the latest tries' starts, oldest first. */
  private starts: number[] = [];
  /** Epoch ms of the first tries of the last two days, oldest first: what a day's cap counts. */
  private firstStarts: number[] = [];
  /** Pacing holds the next try until then (the latest OutboxDeferred; it is over once `until` passed or a try started). */
  deferral: Deferral | undefined;

  static fromSnapshot(snapshot: OutboxSnapshotState): OutboxState {
    const state = new OutboxState();
    for (const [key, record] of snapshot.keys ?? []) state.keys.set(key, record);
    state.starts = [...(snapshot.starts ?? [])];
    state.firstStarts = [...(snapshot.firstStarts ?? [])];
    if (snapshot.deferral) state.deferral = { ...snapshot.deferral };
    for (const message of snapshot.messages) state.add(message);
    for (const revoke of snapshot.revokes) state.revokes.set(revoke.waMessageId, revoke);
    state.lastSeq = snapshot.lastSeq;
    return state;
  }

  /** A copy that later changes do not reach: items are copied one level deep (their content is never changed in place). */
  toSnapshot(): OutboxSnapshotState {
    return {
      messages: [...this.messages.values()].map((m) => ({ ...m })),
      revokes: [...this.revokes.values()].map((r) => ({ ...r })),
      lastSeq: this.lastSeq,
      keys: [...this.keys],
      starts: [...this.starts],
      firstStarts: [...this.firstStarts],
      ...(this.deferral ? { deferral: { ...this.deferral } } : {}),
    };
  }

  /**
   * A copy that later changes of either do not reach, everything included (items copied one level deep, as
   * toSnapshot: their content is never changed in place): what the decider's pure evolve starts from.
   */
  clone(): OutboxState {
    const copy = new OutboxState();
    for (const [outboxId, message] of this.messages) copy.messages.set(outboxId, { ...message });
    for (const [waMessageId, revoke] of this.revokes) copy.revokes.set(waMessageId, { ...revoke });
    for (const [waMessageId, outboxId] of this.outboxIdByWaId) copy.outboxIdByWaId.set(waMessageId, outboxId);
    for (const receipt of this.recentReceipts) copy.recentReceipts.add(receipt);
    for (const [waMessageId, left] of this.recentlyLeft) copy.recentlyLeft.set(waMessageId, { ...left });
    for (const [key, record] of this.keys) copy.keys.set(key, record);
    copy.starts = [...this.starts];
    copy.firstStarts = [...this.firstStarts];
    if (this.deferral) copy.deferral = { ...this.deferral };
    copy.lastSeq = this.lastSeq;
    return copy;
  }

  get size(): number {
    return this.messages.size + this.revokes.size;
  }

  /** The oldest pending message. */
  head(): PendingMessage | undefined {
    return this.messages.values().next().value;
  }

  /**
   * How long to wait before another try may start without more than `ratePerMinute` in any 60 s window
   * (0: now), counted from the tries the stream recorded, whichever process made them.
   */
  rateWait(now: number, ratePerMinute: number): number {
    if (ratePerMinute > this.starts.length) return 0;
    const oldestInLimit = this.starts[this.starts.length - ratePerMinute];
    return Math.max(0, oldestInLimit + RATE_WINDOW_MS - now);
  }

  /** First tries started at or after `since` (epoch ms, within the last two days): the sends a day's cap counts. */
  sendsSince(since: number): number {
    return this.firstStarts.length - firstAtOrAfter(this.firstStarts, since);
  }

  /** A message that left the outbox lately (sent, failed or cancelled), with its latest status. */
  recentlyLeftMessage(waMessageId: string): { outboxId: string; status: string } | undefined {
    return this.recentlyLeft.get(waMessageId);
  }

  hasRecentReceipt(waMessageId: string, status: string): boolean {
    return this.recentReceipts.has(`${waMessageId}/${status}`);
  }

  byWaMessageId(waMessageId: string): PendingMessage | undefined {
    const outboxId = this.outboxIdByWaId.get(waMessageId);
    return outboxId === undefined ? undefined : this.messages.get(outboxId);
  }

  /**
   * Applies the event and answers how to take it back exactly, or undefined when it cannot be (it is applied
   * all the same): a change that moves an entry within a Map's order (a message leaving, a key evicted or
   * refreshed) is not undone. Several processes: DeviceOutbox takes back a decision whose append lost to
   * another writer, instead of reading the whole stream again.
   */
  applyUndoable(event: OutboxEvent): Undo | undefined {
    const undo = this.undoOf(event);
    this.apply(event);
    return undo;
  }

  /** What takes back `event`, read before it is applied (see applyUndoable). */
  private undoOf(event: OutboxEvent): Undo | undefined {
    switch (event.type) {
      case 'OutboxMessageQueued': {
        const { outboxId, waMessageId, idempotency } = event.data;
        // A key already there moves to the end, and a key beyond RECENT_KEYS evicts the oldest: not undone.
        if (idempotency && (this.keys.has(idempotency.key) || this.keys.size >= RECENT_KEYS)) return undefined;
        const replaced = this.messages.get(outboxId);
        const formerId = this.outboxIdByWaId.get(waMessageId);
        const lastSeq = this.lastSeq;
        return () => {
          // A Map keeps a replaced entry's place: setting it back restores the order too.
          if (replaced) this.messages.set(outboxId, replaced);
          else this.messages.delete(outboxId);
          if (formerId === undefined) this.outboxIdByWaId.delete(waMessageId);
          else this.outboxIdByWaId.set(waMessageId, formerId);
          this.lastSeq = lastSeq;
          if (idempotency) this.keys.delete(idempotency.key);
        };
      }
      case 'OutboxMessageSending': {
        const message = this.messages.get(event.data.outboxId);
        const fields = message && { status: message.status, attempts: message.attempts };
        const starts = this.starts;
        const length = starts.length;
        const firstStarts = this.firstStarts;
        const firstLength = firstStarts.length;
        const deferral = this.deferral;
        return () => {
          if (message) Object.assign(message, fields);
          // apply pushes onto these arrays (and may replace them with their tails): their first items are as they were.
          starts.length = length;
          this.starts = starts;
          firstStarts.length = firstLength;
          this.firstStarts = firstStarts;
          this.deferral = deferral;
        };
      }
      case 'OutboxDeferred': {
        const deferral = this.deferral;
        return () => {
          this.deferral = deferral;
        };
      }
      case 'OutboxAttemptFailed': {
        const message = this.messages.get(event.data.outboxId);
        if (!message) return () => undefined;
        const { status, failures, lastError, retryAt } = message;
        return () => Object.assign(message, { status, failures, lastError, retryAt });
      }
      case 'OutboxMessageEdited': {
        const message = this.messages.get(event.data.outboxId);
        if (!message) return () => undefined;
        const { content } = message;
        return () => {
          message.content = content;
        };
      }
      case 'OutboxRevokeRequested': {
        const { waMessageId } = event.data;
        const replaced = this.revokes.get(waMessageId);
        return () => {
          if (replaced) this.revokes.set(waMessageId, replaced);
          else this.revokes.delete(waMessageId);
        };
      }
      case 'OutboxRevokeFailed': {
        const revoke = this.revokes.get(event.data.waMessageId);
        if (!revoke) return () => undefined;
        if (event.data.final) return undefined;
        const { attempts, retryAt, lastError } = revoke;
        return () => Object.assign(revoke, { attempts, retryAt, lastError });
      }
      case 'MessageStatusChanged': {
        const { status, waMessageId, outboxId } = event.data;
        const left = this.recentlyLeft.get(waMessageId);
        const leftStatus = left?.status;
        const restoreLeft = () => {
          if (left) left.status = leftStatus!;
        };
        if (RECEIPTS.has(status)) {
          const key = `${waMessageId}/${status}`;
          const known = this.recentReceipts.has(key);
          if (!known && this.recentReceipts.size >= RECENT_RECEIPTS) return undefined;
          const message = this.byWaMessageId(waMessageId);
          const confirmed = message?.confirmed;
          return () => {
            restoreLeft();
            if (message) message.confirmed = confirmed!;
            if (!known) this.recentReceipts.delete(key);
          };
        }
        if (status === 'deleted') return this.revokes.has(waMessageId) ? undefined : restoreLeft;
        const leaving = outboxId ?? this.outboxIdByWaId.get(waMessageId);
        return leaving !== undefined && this.messages.has(leaving) ? undefined : restoreLeft;
      }
    }
  }

  apply(event: OutboxEvent): void {
    switch (event.type) {
      case 'OutboxMessageQueued': {
        const { outboxId, waMessageId, to, seq, content, createdAt, replyTo, mentions, expiresAt, audience } =
          event.data;
        this.add({
          outboxId,
          waMessageId,
          to,
          seq,
          content,
          createdAt,
          status: 'queued',
          attempts: 0,
          failures: 0,
          retryAt: 0,
          confirmed: false,
          ...(replyTo ? { replyTo } : {}),
          ...(mentions ? { mentions } : {}),
          ...(expiresAt ? { expiresAt } : {}),
          ...(audience ? { audience } : {}),
        });
        this.lastSeq = Math.max(this.lastSeq, seq);
        if (event.data.idempotency) {
          const { key, fingerprint } = event.data.idempotency;
          this.keys.delete(key);
          this.keys.set(key, { fingerprint, answer: answerOf(event.data), at: Date.parse(createdAt) });
          if (this.keys.size > RECENT_KEYS) this.keys.delete(this.keys.keys().next().value!);
        }
        return;
      }
      case 'OutboxMessageSending': {
        const message = this.messages.get(event.data.outboxId);
        if (message) {
          message.status = 'sending';
          message.attempts = event.data.attempt;
        }
        if (event.data.startedAt !== undefined) {
          this.addStart(event.data.startedAt);
          if (event.data.attempt === 1) this.addFirstStart(event.data.startedAt);
        }
        // A try started: the window was open.
        this.deferral = undefined;
        return;
      }
      case 'OutboxDeferred':
        this.deferral = { until: Date.parse(event.data.deferredUntil), reason: event.data.reason };
        return;
      case 'OutboxAttemptFailed': {
        const message = this.messages.get(event.data.outboxId);
        if (message) {
          message.status = 'queued';
          if (event.data.counted) message.failures += 1;
          message.lastError = event.data.error;
          message.retryAt = event.data.retryAt;
        }
        return;
      }
      case 'OutboxMessageEdited': {
        const message = this.messages.get(event.data.outboxId);
        // Content is never changed in place (snapshots share it): a new one replaces it.
        if (message) message.content = withText(message.content, event.data.text);
        return;
      }
      case 'OutboxRevokeRequested': {
        const { waMessageId, to, outboxId } = event.data;
        this.revokes.set(waMessageId, {
          waMessageId,
          to,
          ...(outboxId === undefined ? {} : { outboxId }),
          attempts: 0,
          retryAt: 0,
        });
        return;
      }
      case 'OutboxRevokeFailed': {
        const revoke = this.revokes.get(event.data.waMessageId);
        if (!revoke) return;
        if (event.data.final) {
          this.revokes.delete(event.data.waMessageId);
          return;
        }
        revoke.attempts = event.data.attempt;
        revoke.retryAt = event.data.retryAt;
        revoke.lastError = event.data.error;
        return;
      }
      case 'MessageStatusChanged': {
        const { status, waMessageId, outboxId } = event.data;
        const left = this.recentlyLeft.get(waMessageId);
        if (left) left.status = nextStatus(left.status, status);
        if (RECEIPTS.has(status)) {
          const message = this.byWaMessageId(waMessageId);
          if (message) message.confirmed = true;
          this.rememberReceipt(`${waMessageId}/${status}`);
          return;
        }
        if (status === 'deleted') {
          this.revokes.delete(waMessageId);
          return;
        }
        // sent, failed, cancelled, expired: the message leaves the outbox.
        const leaving = outboxId ?? this.outboxIdByWaId.get(waMessageId);
        if (leaving !== undefined && this.messages.has(leaving)) this.rememberLeft(waMessageId, leaving, status);
        this.remove(leaving);
        return;
      }
    }
  }

  private addStart(at: number): void {
    this.starts.push(at);
    if (this.starts.length <= RECENT_STARTS) return;
    const expired = firstAtOrAfter(this.starts, at - RATE_WINDOW_MS);
    if (expired >= this.starts.length / 2) this.starts = this.starts.slice(expired);
  }

  private addFirstStart(at: number): void {
    this.firstStarts.push(at);
    const old = firstAtOrAfter(this.firstStarts, at - DAY_COUNT_WINDOW_MS);
    if (old > 0 && old >= this.firstStarts.length / 2) this.firstStarts = this.firstStarts.slice(old);
  }

  private rememberLeft(waMessageId: string, outboxId: string, status: string): void {
    this.recentlyLeft.set(waMessageId, { outboxId, status });
    if (this.recentlyLeft.size > RECENT_MESSAGES) this.recentlyLeft.delete(this.recentlyLeft.keys().next().value!);
  }

  private rememberReceipt(key: string): void {
    this.recentReceipts.add(key);
    if (this.recentReceipts.size > RECENT_RECEIPTS)
      this.recentReceipts.delete(this.recentReceipts.values().next().value!);
  }

  private add(message: PendingMessage): void {
    this.messages.set(message.outboxId, message);
    this.outboxIdByWaId.set(message.waMessageId, message.outboxId);
  }

  private remove(outboxId: string | undefined): void {
    if (outboxId === undefined) return;
    const message = this.messages.get(outboxId);
    if (!message) return;
    this.messages.delete(outboxId);
    this.outboxIdByWaId.delete(message.waMessageId);
  }
}

/** Takes back one applied event (OutboxState.applyUndoable). */
export type Undo = () => void;

/** Whether a queued content has a text or caption that an edit may replace. */
export function isEditable(content: QueuedContent): boolean {
  return (
    content.kind === 'text' ||
    content.kind === 'link' ||
    content.kind === 'image' ||
    content.kind === 'video' ||
    content.kind === 'file'
  );
}

/** The content with its text (or caption) replaced; unchanged when it has none. */
export function withText(content: QueuedContent, text: string): QueuedContent {
  switch (content.kind) {
    case 'text':
    case 'link':
      return { ...content, text };
    case 'image':
    case 'video':
    case 'file':
      return { ...content, caption: text };
    default:
      return content;
  }
}

/** The index of the first value ≥ `value` in an ascending list (its length when there is none). */
function firstAtOrAfter(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle] < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
