/**
 * The outbox's pure decisions, given / when / then: given the events of the outbox stream (folded by
 * OutboxState.apply, the outbox's evolve), when a decision runs, then its events and its answer.
 */
import { describe, expect, it } from 'vitest';
import type { Decide } from '../../../src/outbox/stream/device-outbox.js';
import {
  RepeatedSend,
  cancelMessage,
  clearOutbox,
  expireMessages,
  queueMessage,
  recordAttemptFailed,
  recordReceipt,
  recordSent,
  requestRevoke,
  startSending,
} from '../../../src/outbox/stream/outbox-decisions.js';
import { nextJob } from '../../../src/outbox/drain/outbox-drainer.js';
import { nextStatus } from '../../../src/outbox/stream/message-status.js';
import type { OutboxEvent } from '../../../src/outbox/stream/outbox-events.js';
import { OutboxState } from '../../../src/outbox/stream/outbox-state.js';
import { DomainError } from '../../../src/errors/domain-error.js';

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
const when = <R>(events: OutboxEvent[], decide: Decide<R>) => decide(given(events));

const expiring = (n: number, expiresAt: string): OutboxEvent => {
  const event = queued(n);
  return { ...event, data: { ...(event.data as object), expiresAt } } as OutboxEvent;
};

describe('outbox decisions', () => {
  it('expires queued messages past their expiresAt, not one being sent nor one still in time', () => {
    const past = new Date(NOW - 1).toISOString();
    const future = new Date(NOW + 60_000).toISOString();
    const { events, result } = when(
      [expiring(1, past), expiring(2, future), queued(3), expiring(4, past), sending(4)],
      expireMessages('d', NOW),
    );
    expect(result.map((m) => m.outboxId)).toEqual(['o1']);
    expect(events).toEqual([
      {
        type: 'MessageStatusChanged',
        data: {
          deviceId: 'd',
          waMessageId: 'W1',
          status: 'expired',
          recipient: '4915100000000',
          outboxId: 'o1',
          timestamp: Math.floor(NOW / 1000),
          error: { code: 'expired', message: expect.stringContaining(past) },
        },
      },
    ]);
    // Expired is final: the message leaves the outbox, and a late receipt or cancel does not revive it.
    const after = given([expiring(1, past), ...events]);
    expect(after.messages.size).toBe(0);
  });

  it('a try that finds its message expired records expired instead of sending it late', () => {
    const past = new Date(NOW - 1).toISOString();
    const start = when([expiring(1, past)], startSending('d', 'o1', NOW));
    expect(start.result.action).toBe('expired');
    expect(start.events.map((e) => (e.data as { status?: string }).status)).toEqual(['expired']);
    expect(when([expiring(1, new Date(NOW + 1).toISOString())], startSending('d', 'o1', NOW)).result.action).toBe(
      'send',
    );
  });

  it('queues with the next sequence number', () => {
    const { events, result } = when(
      [queued(1), queued(2)],
      queueMessage('d', {
        outboxId: 'o3',
        waMessageId: 'W3',
        to: '4915100000000',
        content: { kind: 'text', text: 'x' },
        createdAt: 'c',
      }),
    );
    expect(result.seq).toBe(3);
    expect(events).toEqual([{ type: 'OutboxMessageQueued', data: result }]);
  });

  it('decides an Idempotency-Key on the stream: a repeat queues nothing and answers the first, another request is refused (issue 14)', () => {
    const first = {
      outboxId: 'o1',
      waMessageId: 'W1',
      to: '4915100000000',
      content: { kind: 'text' as const, text: 'x' },
      createdAt: '2026-01-01T00:00:00.000Z',
      idempotency: { key: 'k', fingerprint: 'f' },
    };
    const { events } = when([], queueMessage('d', first, 60_000));
    const state = given(events as OutboxEvent[]);
    const again = { ...first, outboxId: 'o2', waMessageId: 'W2', createdAt: '2026-01-01T00:00:30.000Z' };
    const repeat = (() => {
      try {
        queueMessage('d', again, 60_000)(state);
      } catch (error) {
        return error;
      }
    })();
    expect(repeat).toBeInstanceOf(RepeatedSend);
    expect((repeat as RepeatedSend).answer).toMatchObject({ outboxId: 'o1', waMessageId: 'W1', status: 'queued' });
    expect(() =>
      queueMessage('d', { ...again, idempotency: { key: 'k', fingerprint: 'other' } }, 60_000)(state),
    ).toThrowError(expect.objectContaining({ code: 'idempotency_key_reused' }) as unknown as Error);
    // A key recorded with a fingerprint made the way it was before (the fields in the client's order) is recognised
    // by that legacy fingerprint, and only by it.
    expect(() =>
      queueMessage('d', { ...again, idempotency: { key: 'k', fingerprint: 'canonical' } }, 60_000, 'f')(state),
    ).toThrow(RepeatedSend);
    expect(() =>
      queueMessage('d', { ...again, idempotency: { key: 'k', fingerprint: 'canonical' } }, 60_000, 'other')(state),
    ).toThrowError(expect.objectContaining({ code: 'idempotency_key_reused' }) as unknown as Error);
    // Past its time to live the key is a new request; the state survives a snapshot.
    expect(queueMessage('d', { ...again, createdAt: '2026-01-01T00:02:00.000Z' }, 60_000)(state).events).toHaveLength(
      1,
    );
    expect(() => queueMessage('d', again, 60_000)(OutboxState.fromSnapshot(state.toSnapshot()))).toThrow(RepeatedSend);
  });

  it('cancels a queued message, refuses one being sent or unknown', () => {
    expect(
      when(
        [queued(1)],
        cancelMessage('d', (s) => s.messages.get('o1'), NOW),
      ).events,
    ).toEqual([{ ...status(1, 'cancelled') }]);
    expect(() =>
      when(
        [queued(1), sending(1)],
        cancelMessage('d', (s) => s.messages.get('o1'), NOW),
      ),
    ).toThrowError(expect.objectContaining({ code: 'message_sending' }) as unknown as Error);
    expect(() =>
      when(
        [],
        cancelMessage('d', (s) => s.messages.get('o1'), NOW),
      ),
    ).toThrow(DomainError);
  });

  it('clears only what is still queued', () => {
    const { events, result } = when([queued(1), sending(1), queued(2), queued(3)], clearOutbox('d', NOW));
    expect(result.map((m) => m.outboxId)).toEqual(['o2', 'o3']);
    expect(events).toEqual([status(2, 'cancelled'), status(3, 'cancelled')]);
  });

  it('records the try before sending, with the attempt number', () => {
    const { events, result } = when(
      [
        queued(1),
        sending(1),
        {
          type: 'OutboxAttemptFailed',
          data: {
            deviceId: 'd',
            outboxId: 'o1',
            waMessageId: 'W1',
            attempt: 1,
            error: { code: 'x', message: 'x' },
            counted: true,
            retryAt: 0,
          },
        },
      ],
      startSending('d', 'o1', NOW),
    );
    expect(result).toMatchObject({ action: 'send', message: { outboxId: 'o1', attempts: 1, failures: 1 } });
    expect(events).toEqual([{ ...sending(1, 2), data: { ...sending(1, 2).data, startedAt: NOW } }]);
  });

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

  it('a message a receipt already confirmed is recorded sent instead of sent again', () => {
    const receipt = status(1, 'delivered');
    const { events, result } = when([queued(1), sending(1), receipt], startSending('d', 'o1', NOW));
    expect(result.action).toBe('confirm');
    expect(events).toEqual([status(1, 'sent')]);
  });

  it('a message that left the outbox is skipped, and its outcome recorded once', () => {
    expect(when([queued(1), status(1, 'cancelled')], startSending('d', 'o1', NOW))).toEqual({
      events: [],
      result: { action: 'skip' },
    });
    expect(when([queued(1), status(1, 'sent')], recordSent('d', 'o1', NOW))).toEqual({ events: [], result: false });
    expect(
      when(
        [queued(1), sending(1)],
        recordAttemptFailed('d', 'o1', { error: { code: 'e', message: 'm' }, counted: true, retryAt: NOW + 5 }),
      ).events,
    ).toEqual([
      {
        type: 'OutboxAttemptFailed',
        data: {
          deviceId: 'd',
          outboxId: 'o1',
          waMessageId: 'W1',
          attempt: 1,
          error: { code: 'e', message: 'm' },
          counted: true,
          retryAt: NOW + 5,
        },
      },
    ]);
  });

  it('drops a repeated receipt and one that adds nothing to a known status', () => {
    const receipt = { waMessageId: 'W1', status: 'delivered' as const, recipient: '4915100000000', timestamp: 1 };
    const first = when(
      [queued(1), sending(1), status(1, 'sent')],
      recordReceipt('d', receipt, () => undefined),
    );
    expect(first.result).toBe(true);
    expect(first.events[0]).toMatchObject({
      type: 'MessageStatusChanged',
      data: { status: 'delivered', outboxId: 'o1' },
    });
    expect(first.events[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      when(
        [queued(1), sending(1), status(1, 'sent'), status(1, 'delivered')],
        recordReceipt('d', receipt, () => undefined),
      ),
    ).toEqual({ events: [], result: false });
    expect(
      when(
        [],
        recordReceipt('d', { ...receipt, status: 'delivered' }, () => ({ outboxId: 'o1', status: 'read' })),
      ),
    ).toEqual({ events: [], result: false });
  });

  it('records a refusal after the send (a failed receipt) with its error, after sent or delivered, not once read', () => {
    const error = { code: 'refused_by_network', message: 'WhatsApp refused the message after it was sent (error 463)' };
    const refused = { waMessageId: 'W1', status: 'failed' as const, recipient: '4915100000000', timestamp: 2, error };
    const afterSent = when(
      [queued(1), sending(1), status(1, 'sent')],
      recordReceipt('d', refused, () => undefined),
    );
    expect(afterSent.events).toEqual([
      {
        id: expect.any(String),
        type: 'MessageStatusChanged',
        data: {
          deviceId: 'd',
          waMessageId: 'W1',
          status: 'failed',
          recipient: '4915100000000',
          outboxId: 'o1',
          timestamp: 2,
          error,
        },
      },
    ]);
    expect(
      when(
        [],
        recordReceipt('d', refused, () => ({ outboxId: 'o1', status: 'delivered' })),
      ).result,
    ).toBe(true);
    expect(
      when(
        [],
        recordReceipt('d', refused, () => ({ outboxId: 'o1', status: 'read' })),
      ),
    ).toEqual({ events: [], result: false });
    // Once failed, later receipts change nothing, nor does the refusal repeated.
    const failed = [queued(1), sending(1), status(1, 'sent'), afterSent.events[0] as OutboxEvent];
    expect(
      when(
        failed,
        recordReceipt('d', refused, () => undefined),
      ),
    ).toEqual({ events: [], result: false });
    expect(
      when(
        failed,
        recordReceipt('d', { ...refused, status: 'delivered' }, () => undefined),
      ).result,
    ).toBe(false);
  });

  it('asks for a revoke once', () => {
    const target = { waMessageId: 'W9', to: '4915100000000' };
    expect(when([], requestRevoke('d', target))).toEqual({
      events: [{ type: 'OutboxRevokeRequested', data: { deviceId: 'd', ...target } }],
      result: 'requested',
    });
    expect(
      when([{ type: 'OutboxRevokeRequested', data: { deviceId: 'd', ...target } }], requestRevoke('d', target)),
    ).toEqual({ events: [], result: 'already' });
  });
});

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
    expect(
      queueMessage('d', {
        outboxId: 'o5',
        waMessageId: 'W5',
        to: '4915100000000',
        content: { kind: 'text', text: 'x' },
        createdAt: '2026-11-22T12:00:00.000Z',
      })(state).result.seq,
    ).toBe(3);
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
