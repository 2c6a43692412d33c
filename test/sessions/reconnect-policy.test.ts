import { describe, expect, it } from 'vitest';
import {
  type ReconnectSettings,
  backoffDelayMs,
  classifyConnectionError,
  decideAfterDisconnect,
} from '../../src/sessions/reconnect-policy.js';

const settings: ReconnectSettings = { baseDelayMs: 1_000, maxDelayMs: 30_000, jitter: 0.2, maxAttempts: 5 };

describe('the reconnect policy', () => {
  it('classifies why a try failed, in words that say what to do', () => {
    const cases: Array<[string, string]> = [
      ['getaddrinfo ENOTFOUND web.whatsapp.com', 'dns_failure'],
      ['getaddrinfo EAI_AGAIN web.whatsapp.com', 'dns_failure'],
      ['connect ECONNREFUSED 127.0.0.1:443', 'connect_refused'],
      ['connect ETIMEDOUT 157.240.0.1:443', 'timeout'],
      ['connection_lost (408): Connection was lost: keepalive', 'timeout'],
      ['unable to verify the first certificate', 'tls'],
      ['proxy responded with 407', 'proxy'],
      ['status_405 (405): Connection Failure', 'client_outdated'],
      ['read ECONNRESET', 'connection_reset'],
      ['connect ENETUNREACH', 'network_unreachable'],
      ['connection_closed (428): Connection Closed', 'connection_lost'],
      ['', 'connection_lost'],
    ];
    for (const [detail, code] of cases) expect(classifyConnectionError(detail).code, detail).toBe(code);
    expect(classifyConnectionError('status_405 (405): Connection Failure').message).toContain('WA_WEB_VERSION');
    expect(classifyConnectionError('getaddrinfo ENOTFOUND web.whatsapp.com').message).toContain('ENOTFOUND');
  });

  it('restart_required reconnects at once and counts the try', () => {
    expect(decideAfterDisconnect('restart_required', 0, 'restart', settings)).toEqual({
      action: 'reconnect_now',
      attempt: 1,
    });
    expect(decideAfterDisconnect('restart_required', 3, 'restart', settings)).toEqual({
      action: 'reconnect_now',
      attempt: 4,
    });
  });

  it('logged_out unlinks, whatever the count', () => {
    expect(decideAfterDisconnect('logged_out', 0, 'unlinked', settings)).toEqual({ action: 'logged_out' });
    expect(decideAfterDisconnect('logged_out', 99, 'unlinked', settings)).toEqual({ action: 'logged_out' });
  });

  it("connection_replaced fails with that reason and the engine's words", () => {
    expect(decideAfterDisconnect('connection_replaced', 0, 'another device connected', settings)).toEqual({
      action: 'failed',
      error: { code: 'connection_replaced', message: 'another device connected' },
    });
  });

  it('transient retries until maxAttempts tries were made, then fails with too_many_attempts', () => {
    for (let soFar = 0; soFar < settings.maxAttempts; soFar++) {
      expect(decideAfterDisconnect('transient', soFar, 'timeout', settings)).toEqual({
        action: 'retry',
        attempt: soFar + 1,
      });
    }
    const gaveUp = decideAfterDisconnect('transient', settings.maxAttempts, 'timeout', settings);
    expect(gaveUp).toMatchObject({ action: 'failed', error: { code: 'too_many_attempts' } });
    expect(gaveUp.action === 'failed' && gaveUp.error.message).toContain('timeout');
    // Endless restarts are capped the same way.
    expect(decideAfterDisconnect('restart_required', settings.maxAttempts, 'restart', settings)).toMatchObject({
      action: 'failed',
      error: { code: 'too_many_attempts' },
    });
  });

  it('backoff doubles from the base delay and stops at the cap (no jitter)', () => {
    const exact = { ...settings, jitter: 0 };
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelayMs(n, exact))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
    expect(backoffDelayMs(10_000, exact)).toBe(30_000);
  });

  it('jitter spreads each delay within ±jitter of its nominal value, never beyond the cap', () => {
    expect(backoffDelayMs(3, settings, () => 0)).toBe(3_200);
    expect(backoffDelayMs(3, settings, () => 0.5)).toBe(4_000);
    expect(backoffDelayMs(3, settings, () => 0.999_999)).toBe(4_800);
    for (let i = 0; i < 1_000; i++) {
      const attempt = 1 + (i % 8);
      const nominal = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
      const delay = backoffDelayMs(attempt, settings);
      expect(delay).toBeGreaterThanOrEqual(Math.floor(nominal * 0.8));
      expect(delay).toBeLessThanOrEqual(Math.min(settings.maxDelayMs, Math.ceil(nominal * 1.2)));
    }
  });

  it('different random draws give different delays (devices do not retry in lockstep)', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelayMs(4, settings)));
    expect(delays.size).toBeGreaterThan(10);
  });
});
