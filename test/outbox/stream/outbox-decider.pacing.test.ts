/**
 * Pacing in the outbox decider, given / when / then: the day's cap (fixed and warm-up), quiet hours across midnight
 * and across a daylight-saving change, replies in quiet hours, the unanswered limit. The time and the policy come in
 * the command; the sends counted come from the stream (first tries' OutboxMessageSending).
 */
import { describe, expect, it } from 'vitest';
import { type NewMessage, type OutboxCommand, outboxDecider } from '../../../src/outbox/stream/outbox-decider.js';
import type { OutboxEvent } from '../../../src/outbox/stream/outbox-events.js';
import type { PacingContext, PacingPolicy } from '../../../src/outbox/pacing/pacing.js';
import { deciderSpecification } from '../../support/decider-specification.js';

const spec = deciderSpecification(outboxDecider);
const given = (...events: OutboxEvent[]) => spec.given(events);

const D = 'd';
const PEER = '4915100000000';
const at = (iso: string) => Date.parse(iso);

const queued = (n: number): OutboxEvent => ({
  type: 'OutboxMessageQueued',
  data: {
    deviceId: D,
    outboxId: `o${n}`,
    waMessageId: `W${n}`,
    to: PEER,
    seq: n,
    content: { kind: 'text', text: `m${n}` },
    createdAt: '2026-03-01T00:00:00.000Z',
  },
});
const sending = (n: number, startedAt: number, attempt = 1): OutboxEvent => ({
  type: 'OutboxMessageSending',
  data: { deviceId: D, outboxId: `o${n}`, waMessageId: `W${n}`, attempt, startedAt },
});
const sent = (n: number): OutboxEvent => ({
  type: 'MessageStatusChanged',
  data: { deviceId: D, waMessageId: `W${n}`, status: 'sent', recipient: PEER, outboxId: `o${n}`, timestamp: 0 },
});
const attemptFailed = (n: number): OutboxEvent => ({
  type: 'OutboxAttemptFailed',
  data: {
    deviceId: D,
    outboxId: `o${n}`,
    waMessageId: `W${n}`,
    attempt: 1,
    error: { code: 'x', message: 'x' },
    counted: true,
    retryAt: 0,
  },
});
/** `count` messages queued, tried first at `startedAt` and sent. */
const sentAt = (count: number, startedAt: number, from = 1): OutboxEvent[] =>
  Array.from({ length: count }, (_, i) => [queued(from + i), sending(from + i, startedAt), sent(from + i)]).flat();
const deferred = (until: string, reason: 'daily_cap' | 'quiet_hours'): OutboxEvent => ({
  type: 'OutboxDeferred',
  data: { deviceId: D, deferredUntil: new Date(until).toISOString(), reason },
});

const start = (n: number, now: number, policy: PacingPolicy, extra: Partial<PacingContext> = {}): OutboxCommand => ({
  type: 'StartSending',
  deviceId: D,
  outboxId: `o${n}`,
  now,
  pacing: { policy, ...extra },
});
const willSend = (n: number, now: number, attempt = 1): OutboxEvent[] => [
  {
    type: 'OutboxMessageSending',
    data: { deviceId: D, outboxId: `o${n}`, waMessageId: `W${n}`, attempt, startedAt: now },
  },
];
const defer = (until: string, reason: 'daily_cap' | 'quiet_hours') => ({
  action: 'defer' as const,
  message: expect.objectContaining({ outboxId: expect.any(String) }),
  until: Date.parse(until),
  reason,
});

describe('pacing in the outbox decider', () => {
  describe('the daily cap', () => {
    const policy: PacingPolicy = { timezone: 'Europe/Berlin', dailyCap: 3 };
    it('lets the sends under the cap go', () => {
      const now = at('2026-03-02T10:00:00Z');
      given(...sentAt(2, now - 60_000), queued(3))
        .when(start(3, now, policy))
        .then(willSend(3, now));
    });
    it('defers the send over the cap to the next midnight in the time zone, recorded once', () => {
      const now = at('2026-03-02T10:00:00Z');
      given(...sentAt(3, now - 60_000), queued(4))
        .when(start(4, now, policy))
        // Midnight in Berlin (UTC+1 in March before the change) is 23:00 UTC.
        .then([deferred('2026-03-02T23:00:00Z', 'daily_cap')], defer('2026-03-02T23:00:00Z', 'daily_cap'));
      given(...sentAt(3, now - 60_000), queued(4), deferred('2026-03-02T23:00:00Z', 'daily_cap'))
        .when(start(4, now + 1_000, policy))
        .thenNothing(defer('2026-03-02T23:00:00Z', 'daily_cap'));
    });
    it("counts the day in the time zone: yesterday's sends (local) do not count, and the cap renews at local midnight", () => {
      // 22:30 UTC on the 2nd is 23:30 in Berlin: three sends then are the 2nd's.
      const evening = at('2026-03-02T22:30:00Z');
      const afterMidnight = at('2026-03-02T23:00:00Z');
      given(...sentAt(3, evening), queued(4))
        .when(start(4, afterMidnight, policy))
        .then(willSend(4, afterMidnight));
      given(...sentAt(3, evening), queued(4))
        .when(start(4, afterMidnight - 1, policy))
        .then([deferred('2026-03-02T23:00:00Z', 'daily_cap')], defer('2026-03-02T23:00:00Z', 'daily_cap'));
    });
    it('counts first tries only: a retry is the same send, and is not paced', () => {
      const now = at('2026-03-02T10:00:00Z');
      const history = [...sentAt(2, now - 1_000), queued(3), sending(3, now - 500), attemptFailed(3)];
      expect(given(...history).state.sendsSince(now - 86_400_000)).toBe(3);
      given(...history)
        .when(start(3, now, policy))
        .then(willSend(3, now, 2));
    });
  });

  describe('warm-up', () => {
    const policy: PacingPolicy = {
      timezone: 'UTC',
      warmup: { startPerDay: 2, growthPercent: 50, maxPerDay: 4 },
    };
    const linkedAt = at('2026-03-01T18:00:00Z');
    it('allows startPerDay on the day of the link', () => {
      const now = at('2026-03-01T20:00:00Z');
      given(...sentAt(2, now - 1_000), queued(3))
        .when(start(3, now, policy, { linkedAt }))
        .then([deferred('2026-03-02T00:00:00Z', 'daily_cap')], defer('2026-03-02T00:00:00Z', 'daily_cap'));
    });
    it('grows each calendar day by growthPercent (2 → 3 on day 1), at most maxPerDay', () => {
      const day1 = at('2026-03-02T09:00:00Z');
      given(...sentAt(2, day1 - 1_000), queued(3))
        .when(start(3, day1, policy, { linkedAt }))
        .then(willSend(3, day1));
      given(...sentAt(3, day1 - 1_000), queued(4))
        .when(start(4, day1, policy, { linkedAt }))
        .then([deferred('2026-03-03T00:00:00Z', 'daily_cap')], defer('2026-03-03T00:00:00Z', 'daily_cap'));
      // Day 10: 2 · 1.5^10 is far above 4.
      const day10 = at('2026-03-11T09:00:00Z');
      given(...sentAt(4, day10 - 1_000), queued(5))
        .when(start(5, day10, policy, { linkedAt }))
        .then([deferred('2026-03-12T00:00:00Z', 'daily_cap')], defer('2026-03-12T00:00:00Z', 'daily_cap'));
    });
    it('takes the smaller of the warm-up and the daily cap', () => {
      const day10 = at('2026-03-11T09:00:00Z');
      given(...sentAt(1, day10 - 1_000), queued(2))
        .when(start(2, day10, { ...policy, dailyCap: 1 }, { linkedAt }))
        .then([deferred('2026-03-12T00:00:00Z', 'daily_cap')], defer('2026-03-12T00:00:00Z', 'daily_cap'));
    });
  });

  describe('quiet hours', () => {
    const policy: PacingPolicy = { timezone: 'Europe/Berlin', quietHours: { from: '22:00', to: '08:00' } };
    it('defer a send inside them across midnight until they end (before and after midnight)', () => {
      // 23:30 Berlin on the 2nd (22:30 UTC) → 08:00 Berlin on the 3rd (07:00 UTC).
      given(queued(1))
        .when(start(1, at('2026-03-02T22:30:00Z'), policy))
        .then([deferred('2026-03-03T07:00:00Z', 'quiet_hours')], defer('2026-03-03T07:00:00Z', 'quiet_hours'));
      // 03:00 Berlin on the 3rd → 08:00 the same day.
      given(queued(1))
        .when(start(1, at('2026-03-03T02:00:00Z'), policy))
        .then([deferred('2026-03-03T07:00:00Z', 'quiet_hours')], defer('2026-03-03T07:00:00Z', 'quiet_hours'));
    });
    it('let sends go outside them', () => {
      const now = at('2026-03-03T07:00:00Z');
      given(queued(1))
        .when(start(1, now, policy))
        .then(willSend(1, now));
      const evening = at('2026-03-03T20:59:00Z');
      given(queued(1))
        .when(start(1, evening, policy))
        .then(willSend(1, evening));
    });
    it('end at the local hour across a daylight-saving change (Berlin springs forward on 29 March 2026)', () => {
      // 23:00 Berlin on the 28th is 22:00 UTC (UTC+1); 08:00 on the 29th is 06:00 UTC (UTC+2): a night of 7 hours.
      given(queued(1))
        .when(start(1, at('2026-03-28T22:00:00Z'), policy))
        .then([deferred('2026-03-29T06:00:00Z', 'quiet_hours')], defer('2026-03-29T06:00:00Z', 'quiet_hours'));
      // And back in autumn (25 October 2026): 23:00 on the 24th is 21:00 UTC, 08:00 on the 25th is 07:00 UTC.
      given(queued(1))
        .when(start(1, at('2026-10-24T21:00:00Z'), policy))
        .then([deferred('2026-10-25T07:00:00Z', 'quiet_hours')], defer('2026-10-25T07:00:00Z', 'quiet_hours'));
    });
    it('that start inside a skipped hour begin when the clocks jump', () => {
      // 02:30 does not exist in Berlin on 29 March 2026: quiet hours from 02:30 begin at 03:00 (01:00 UTC).
      const odd: PacingPolicy = { timezone: 'Europe/Berlin', quietHours: { from: '02:30', to: '05:00' } };
      const before = at('2026-03-29T00:59:00Z');
      given(queued(1))
        .when(start(1, before, odd))
        .then(willSend(1, before));
      given(queued(1))
        .when(start(1, at('2026-03-29T01:00:00Z'), odd))
        .then([deferred('2026-03-29T03:00:00Z', 'quiet_hours')], defer('2026-03-29T03:00:00Z', 'quiet_hours'));
    });
    it('let replies go with allowReplies: the recipient wrote in the last 24 h', () => {
      const now = at('2026-03-02T22:30:00Z');
      const replies: PacingPolicy = { ...policy, quietHours: { from: '22:00', to: '08:00', allowReplies: true } };
      given(queued(1))
        .when(start(1, now, replies, { lastInboundAt: now - 3_600_000 }))
        .then(willSend(1, now));
      // Wrote two days ago: not a reply.
      given(queued(1))
        .when(start(1, now, replies, { lastInboundAt: now - 2 * 86_400_000 }))
        .then([deferred('2026-03-03T07:00:00Z', 'quiet_hours')], defer('2026-03-03T07:00:00Z', 'quiet_hours'));
      // Without allowReplies a reply waits too.
      given(queued(1))
        .when(start(1, now, policy, { lastInboundAt: now - 3_600_000 }))
        .then([deferred('2026-03-03T07:00:00Z', 'quiet_hours')], defer('2026-03-03T07:00:00Z', 'quiet_hours'));
    });
    it('and a cap together: the cap renews at midnight, which is quiet, so the window is the end of the quiet hours', () => {
      const both: PacingPolicy = { ...policy, dailyCap: 1 };
      const now = at('2026-03-02T15:00:00Z');
      given(...sentAt(1, now - 1_000), queued(2))
        .when(start(2, now, both))
        .then([deferred('2026-03-03T07:00:00Z', 'daily_cap')], defer('2026-03-03T07:00:00Z', 'daily_cap'));
    });
  });

  describe('the unanswered limit', () => {
    const message: NewMessage = {
      outboxId: 'o1',
      waMessageId: 'W1',
      to: PEER,
      content: { kind: 'text', text: 'x' },
      createdAt: '2026-03-01T00:00:00.000Z',
    };
    const queue = (
      unanswered: { limit: number; answered: boolean; sent: number },
      countedUpToSeq = 0,
    ): OutboxCommand => ({
      type: 'QueueMessage',
      deviceId: D,
      message: { ...message, outboxId: 'o9', waMessageId: 'W9' },
      unanswered: { ...unanswered, countedUpToSeq },
    });
    const queuedAs = (seq: number): OutboxEvent[] => [
      { type: 'OutboxMessageQueued', data: { deviceId: D, ...message, outboxId: 'o9', waMessageId: 'W9', seq } },
    ];
    it('queues up to the limit to a number that never wrote', () => {
      given()
        .when(queue({ limit: 2, answered: false, sent: 1 }))
        .then(queuedAs(1));
    });
    it('refuses the next one, recipient_unresponsive, and queues nothing', () => {
      given()
        .when(queue({ limit: 2, answered: false, sent: 2 }))
        .thenRefused('recipient_unresponsive');
    });
    it('adds the messages to the recipient queued after the index counted (concurrent sends), not those it counted', () => {
      // The index counted one message up to seq 0; a concurrent send queued o1 since: two, the limit.
      given(queued(1))
        .when(queue({ limit: 2, answered: false, sent: 1 }, 0))
        .thenRefused('recipient_unresponsive');
      // The index counted o1 already (up to seq 1): one.
      given(queued(1))
        .when(queue({ limit: 2, answered: false, sent: 1 }, 1))
        .then(queuedAs(2));
    });
    it('never refuses a number that wrote to the account', () => {
      given()
        .when(queue({ limit: 2, answered: true, sent: 50 }))
        .then(queuedAs(1));
    });
  });

  describe('the deferral in the state', () => {
    it('is over once a try starts', () => {
      const state = given(queued(1), deferred('2026-03-03T07:00:00Z', 'quiet_hours'), sending(1, 1)).state;
      expect(state.deferral).toBeUndefined();
      expect(given(queued(1), deferred('2026-03-03T07:00:00Z', 'quiet_hours')).state.deferral).toEqual({
        until: Date.parse('2026-03-03T07:00:00Z'),
        reason: 'quiet_hours',
      });
    });
  });
});
