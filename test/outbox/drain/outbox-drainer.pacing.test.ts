/**
 * The outbox drainer under pacing: a deferral the lane records never sends the message itself, so a window that
 * opened meanwhile lets the message go through the lane's rate limiter like any other try.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PacingContext } from '../../../src/outbox/pacing/pacing.js';
import { FakeConnection, type Harness, outboxHarness, text, watchRateLimiter } from '../support/harness.js';
import { eventually } from '../../support/eventually.js';
import { TestClock } from '../../support/test-clock.js';

const DEVICE = 'shop-1';

describe('the outbox drainer, paced', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a window that opens while the lane records its deferral: the message goes through the rate limiter', async () => {
    // Quiet hours end at 06:00 UTC; the lane looks first a moment before, and while it looks for a queued reply
    // (the second pacing look-up) the hour passes, so the decider sees the window open when the deferral is recorded.
    const clock = new TestClock({ start: Date.parse('2026-03-02T05:59:59.000Z') });
    let lookUps = 0;
    const pacing = async (): Promise<PacingContext> => {
      if (++lookUps === 2) await clock.advance(2_000);
      return { policy: { timezone: 'UTC', quietHours: { from: '22:00', to: '06:00', allowReplies: true } } };
    };
    h = await outboxHarness({ clock, pacing });
    await h.queue(DEVICE, text('good morning'));
    const connection = new FakeConnection();
    h.connections.online(DEVICE, connection);
    const limiter = watchRateLimiter();
    try {
      h.drainer.start([DEVICE]);
      await eventually(async () => (await h!.statuses(DEVICE)).some((s) => s.status === 'sent'), 'the send');
      expect(lookUps).toBeGreaterThanOrEqual(2);
      // Every try the engine was asked for was started by the lane's rate limiter.
      expect(connection.sent).toHaveLength(1);
      expect(limiter.started()).toBe(1);
      expect((await h.events(DEVICE)).map((e) => e.type)).not.toContain('OutboxDeferred');
    } finally {
      limiter.restore();
    }
  });
  it('in quiet hours, looks for a queued reply with one pacing look-up per recipient, not one per message', async () => {
    const clock = new TestClock({ start: Date.parse('2026-03-02T23:00:00.000Z') });
    let lookUps = 0;
    const pacing = async (): Promise<PacingContext> => {
      lookUps++;
      return { policy: { timezone: 'UTC', quietHours: { from: '22:00', to: '06:00', allowReplies: true } } };
    };
    h = await outboxHarness({ clock, pacing });
    for (let i = 0; i < 5; i++) await h.queue(DEVICE, text(`m${i}`));
    h.connections.online(DEVICE, new FakeConnection());
    h.drainer.start([DEVICE]);
    await eventually(async () => (await h!.events(DEVICE)).some((e) => e.type === 'OutboxDeferred'), 'the deferral');
    // The head's, then the one recipient's while looking for a reply.
    expect(lookUps).toBe(2);
  });
});
