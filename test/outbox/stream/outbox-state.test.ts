/**
 * The outbox's state (OutboxState): what the events of the stream fold into in place (the writer's fold; the
 * decider's evolve is the same on a copy), what the drainer reads of it (nextJob, the rate), its snapshot, and
 * taking an applied event back. The decisions are specified in outbox-decider.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { nextJob } from '../../../src/outbox/drain/outbox-drainer.js';
import { nextStatus } from '../../../src/outbox/stream/message-status.js';
import { outboxDecider } from '../../../src/outbox/stream/outbox-decider.js';
import type { OutboxEvent } from '../../../src/outbox/stream/outbox-events.js';
import { OutboxState } from '../../../src/outbox/stream/outbox-state.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const queued = (n: number): OutboxEvent => ({
  type: 'OutboxMessageQueued',
  data: {
    deviceId: 'd',
    outboxId: `o${n}`,
    waMessageId: `W${n}`,
    to: '4915100000000',
    seq: n,
    content: { kind: 'text', text: `m${n}` },
    createdAt: '2026-11-22T12:00:00.000Z',
  },
});
const sending = (n: number, attempt = 1): OutboxEvent => ({
  type: 'OutboxMessageSending',
  data: { deviceId: 'd', outboxId: `o${n}`, waMessageId: `W${n}`, attempt },
});
const status = (n: number, s: 'sent' | 'delivered' | 'cancelled'): OutboxEvent => ({
  type: 'MessageStatusChanged',
  data: {
    deviceId: 'd',
    waMessageId: `W${n}`,
    status: s,
    recipient: '4915100000000',
    outboxId: `o${n}`,
    timestamp: Math.floor(NOW / 1000),
  },
});

function given(events: OutboxEvent[]): OutboxState {
  const state = new OutboxState();
  for (const event of events) state.apply(event);
  return state;
}
describe('nextJob', () => {
  it('a due revoke first, then the head of the FIFO', () => {
    const revoke: OutboxEvent = {
      type: 'OutboxRevokeRequested',
      data: { deviceId: 'd', waMessageId: 'W9', to: '4915100000000' },
    };
    expect(nextJob(given([queued(1), queued(2), revoke]), NOW)).toEqual({ type: 'revoke', waMessageId: 'W9' });
    expect(nextJob(given([queued(1), queued(2)]), NOW)).toEqual({ type: 'send', outboxId: 'o1' });
  });
  it('waits for the earliest backoff to end, and has nothing to do on an empty outbox', () => {
    const failed: OutboxEvent = {
      type: 'OutboxAttemptFailed',
      data: {
        deviceId: 'd',
        outboxId: 'o1',
        waMessageId: 'W1',
        attempt: 1,
        error: { code: 'e', message: 'm' },
        counted: true,
        retryAt: NOW + 2_000,
      },
    };
    expect(nextJob(given([queued(1), sending(1), failed]), NOW)).toEqual({ type: 'wait', until: NOW + 2_000 });
    expect(nextJob(given([]), NOW)).toBeUndefined();
  });
});

describe('OutboxState', () => {
  it('counts the rate on the stream: the tries recorded in the last minute, whoever made them (issue 14)', () => {
    const started = (n: number, at: number): OutboxEvent => ({
      type: 'OutboxMessageSending',
      data: { deviceId: 'd', outboxId: `o${n}`, waMessageId: `W${n}`, attempt: 1, startedAt: at },
    });
    const state = given([
      queued(1),
      started(1, NOW - 50_000),
      queued(2),
      started(2, NOW - 20_000),
      queued(3),
      started(3, NOW - 1_000),
    ]);
    expect(state.rateWait(NOW, 4)).toBe(0);
    expect(state.rateWait(NOW, 3)).toBe(10_000);
    expect(state.rateWait(NOW, 2)).toBe(40_000);
    expect(OutboxState.fromSnapshot(state.toSnapshot()).rateWait(NOW, 3)).toBe(10_000);
  });

  it('counts a rate above 2,000 a minute too, and forgets tries older than a minute', () => {
    const started = (n: number, at: number): OutboxEvent => ({
      type: 'OutboxMessageSending',
      data: { deviceId: 'd', outboxId: `o${n}`, waMessageId: `W${n}`, attempt: 1, startedAt: at },
    });
    // 5,000 tries in the last 50 s (one every 10 ms), after 3,000 more than a minute ago.
    const old = Array.from({ length: 3_000 }, (_, i) => started(i, NOW - 120_000 + i));
    const recent = Array.from({ length: 5_000 }, (_, i) => started(3_000 + i, NOW - 50_000 + i * 10));
    const state = given([...old, ...recent]);
    expect(state.rateWait(NOW, 5_001)).toBe(0);
    // At 5,000 a minute the oldest of the last 5,000 (50 s ago) must be a minute old first.
    expect(state.rateWait(NOW, 5_000)).toBe(10_000);
    expect(state.rateWait(NOW, 2_500)).toBe(60_000 - 25_000);
    const kept = (state.toSnapshot().starts ?? []).length;
    expect(kept).toBeGreaterThanOrEqual(5_000);
    expect(kept).toBeLessThan(8_000);
  });

  it('keeps only what is pending, in FIFO order, and survives a snapshot', () => {
    const state = given([queued(1), queued(2), queued(3), sending(2), status(2, 'sent'), status(3, 'cancelled')]);
    expect([...state.messages.keys()]).toEqual(['o1']);
    expect(state.lastSeq).toBe(3);
    expect(state.recentlyLeftMessage('W2')).toEqual({ outboxId: 'o2', status: 'sent' });
    const copy = OutboxState.fromSnapshot(JSON.parse(JSON.stringify(state.toSnapshot())));
    expect(copy.toSnapshot()).toEqual(state.toSnapshot());
    expect(copy.byWaMessageId('W1')?.outboxId).toBe('o1');
  });
  it('a receipt for a pending message marks it confirmed; a final revoke failure forgets the revoke', () => {
    const state = given([
      queued(1),
      sending(1),
      status(1, 'delivered'),
      { type: 'OutboxRevokeRequested', data: { deviceId: 'd', waMessageId: 'W8', to: 'x' } },
    ]);
    expect(state.messages.get('o1')?.confirmed).toBe(true);
    state.apply({
      type: 'OutboxRevokeFailed',
      data: {
        deviceId: 'd',
        waMessageId: 'W8',
        error: { code: 'e', message: 'm' },
        final: true,
        attempt: 1,
        retryAt: 0,
      },
    });
    expect(state.revokes.size).toBe(0);
  });
});

describe('taking decisions back (OutboxState.applyUndoable, issue 14)', () => {
  const keyed = (n: number, key: string): OutboxEvent => {
    const event = queued(n);
    return { ...event, data: { ...(event.data as object), idempotency: { key, fingerprint: `f${n}` } } } as OutboxEvent;
  };
  const failedTry = (n: number): OutboxEvent => ({
    type: 'OutboxAttemptFailed',
    data: {
      deviceId: 'd',
      outboxId: `o${n}`,
      waMessageId: `W${n}`,
      attempt: 1,
      error: { code: 'x', message: 'x' },
      counted: true,
      retryAt: NOW + 1,
    },
  });
  const revoke = (n: number): OutboxEvent => ({
    type: 'OutboxRevokeRequested',
    data: { deviceId: 'd', waMessageId: `V${n}`, to: '4915100000000' },
  });

  it('leaves the state exactly as it was, order included, after queues, tries, failures, receipts and revokes taken back', () => {
    const history = [queued(1), keyed(2, 'k2'), sending(1), revoke(1)];
    const state = given(history);
    const before = JSON.stringify(state.toSnapshot());
    const undo = [keyed(3, 'k3'), queued(4), sending(2), failedTry(1), status(2, 'delivered'), revoke(2)].map((event) =>
      state.applyUndoable(event),
    );
    expect(undo.every((u) => u !== undefined)).toBe(true);
    expect(state.messages.size).toBe(4);
    for (const u of undo.reverse()) u!();
    expect(JSON.stringify(state.toSnapshot())).toBe(before);
    expect(state.byWaMessageId('W3')).toBeUndefined();
    expect(state.hasRecentReceipt('W2', 'delivered')).toBe(false);
    // And it decides as the state it was: the next message gets the same sequence number.
    const next = outboxDecider.decide(
      {
        type: 'QueueMessage',
        deviceId: 'd',
        message: {
          outboxId: 'o5',
          waMessageId: 'W5',
          to: '4915100000000',
          content: { kind: 'text', text: 'x' },
          createdAt: '2026-11-22T12:00:00.000Z',
        },
      },
      state,
    );
    expect(next.result).toMatchObject({ kind: 'queued', message: { seq: 3 } });
  });

  it('cannot take back a message leaving the outbox or a key used again: those moves change an order', () => {
    expect(given([queued(1), queued(2)]).applyUndoable(status(1, 'sent'))).toBeUndefined();
    expect(given([queued(1), queued(2)]).applyUndoable(status(1, 'cancelled'))).toBeUndefined();
    expect(given([keyed(1, 'k')]).applyUndoable(keyed(2, 'k'))).toBeUndefined();
  });
});

describe('message status rules (nextStatus)', () => {
  it('a failure ends a pending message, and one the network refused after sent or delivered; not one read, played or gone', () => {
    expect(['queued', 'sending', 'sent', 'delivered'].map((current) => nextStatus(current, 'failed'))).toEqual([
      'failed',
      'failed',
      'failed',
      'failed',
    ]);
    expect(
      ['read', 'played', 'cancelled', 'deleted', 'expired'].map((current) => nextStatus(current, 'failed')),
    ).toEqual(['read', 'played', 'cancelled', 'deleted', 'expired']);
    expect(['delivered', 'read', 'sent'].map((next) => nextStatus('failed', next as 'sent'))).toEqual([
      'failed',
      'failed',
      'failed',
    ]);
    // Cancelling and expiring still apply only to what waits.
    expect([nextStatus('sent', 'cancelled'), nextStatus('delivered', 'expired')]).toEqual(['sent', 'delivered']);
  });
});
