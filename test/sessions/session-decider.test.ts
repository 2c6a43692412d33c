/** The session stream's decider: the device machine's decisions as events, and the session rule as its evolve. */
import { describe, expect, it } from 'vitest';
import { createDeviceMachine } from '../../src/sessions/device-machine.js';
import { backoffDelayMs } from '../../src/sessions/reconnect-policy.js';
import { createSessionDecider } from '../../src/sessions/session-decider.js';
import type { SessionEvent } from '../../src/sessions/session-events.js';
import { INITIAL_SESSION_RECORD } from '../../src/sessions/session-record.js';

const settings = { baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: 0.2, maxAttempts: 3 };
const random = () => 0.5;
const decider = createSessionDecider(createDeviceMachine(settings, random));
const context = { deviceId: 'dev', now: Date.parse('2026-01-01T00:00:00.000Z') };
const account = { phone: '4915100000042', jid: '4915100000042@s.whatsapp.net' };
const types = (instructions: readonly { type: string }[]) => instructions.map((i) => i.type);

describe('the session decider', () => {
  it('records a change of state as one SessionStateChanged, with the instructions to carry out after it', () => {
    const closed = decider.resume(INITIAL_SESSION_RECORD);
    const opened = decider.decide({ type: 'OPEN' }, closed, context);
    expect(opened.events).toEqual([
      {
        type: 'SessionStateChanged',
        data: { deviceId: 'dev', state: 'connecting', previousState: 'closed', reason: 'opened' },
      },
    ]);
    expect(opened.state.value).toBe('connecting');
    expect(types(opened.instructions)).toContain('connect');
    // The state it was decided on is left as it was (pure).
    expect(closed.value).toBe('closed');
  });

  it('decides nothing to record for what changes no state (a renewed QR code), but takes the new code', () => {
    const qr = decider.decide(
      { type: 'ENGINE.QR', code: 'first', expiresAt: '2026-01-01T00:01:00.000Z' },
      decider.resume({ state: 'connecting' }),
      context,
    ).state;
    const renewed = decider.decide(
      { type: 'ENGINE.QR', code: 'second', expiresAt: '2026-01-01T00:02:00.000Z' },
      qr,
      context,
    );
    expect(renewed.events).toEqual([]);
    expect(renewed.state.context.qr?.code).toBe('second');
  });

  it('dates the next try of a reconnect from the "now" it is given', () => {
    const online = decider.decide({ type: 'ENGINE.ONLINE', account }, decider.resume({ state: 'connecting' }), context);
    const lost = decider.decide(
      { type: 'ENGINE.DISCONNECTED', kind: 'transient', detail: 'socket closed' },
      online.state,
      context,
    );
    const delay = backoffDelayMs(1, settings, random);
    expect(lost.events[0]?.data).toMatchObject({
      deviceId: 'dev',
      state: 'reconnecting',
      previousState: 'online',
      phone: account.phone,
      reason: 'connection_lost',
      attempt: 1,
      nextRetryAt: new Date(context.now + delay).toISOString(),
    });
    expect(lost.instructions).toContainEqual(
      expect.objectContaining({ type: 'scheduleRetry', params: { delayMs: delay } }),
    );
  });

  it('resumes a record with its linked number and last error, and the live context empty', () => {
    const lastError = { code: 'dns_failure', message: 'getaddrinfo ENOTFOUND' };
    const resumed = decider.resume({ state: 'reconnecting', phone: account.phone, lastError, attempt: 2 });
    expect(resumed.value).toBe('reconnecting');
    expect(resumed.context).toEqual({ attempts: 0, phone: account.phone, lastError });
  });

  it('evolves with the session rule: the number stays until logged out, the error until online', () => {
    const change = (data: Omit<SessionEvent['data'], 'deviceId'>): SessionEvent => ({
      type: 'SessionStateChanged',
      data: { deviceId: 'dev', ...data },
    });
    const events = [
      change({ state: 'online', previousState: 'connecting', phone: account.phone }),
      change({ state: 'failed', previousState: 'online', error: { code: 'connection_replaced', message: 'm' } }),
    ];
    const failed = events.reduce(decider.evolve, decider.initialState());
    expect(failed).toEqual({
      state: 'failed',
      phone: account.phone,
      lastError: { code: 'connection_replaced', message: 'm' },
    });
    expect(decider.evolve(failed, change({ state: 'logged_out', previousState: 'failed' }))).toEqual({
      state: 'logged_out',
    });
  });
});
