import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('session and sandbox settings', () => {
  it('have defaults', () => {
    const config = loadConfig({});
    expect(config.reconnect).toEqual({ baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: 0.2, maxAttempts: 10 });
    expect(config.sandbox).toEqual({ deliveredDelayMs: 500, readDelayMs: 1_500 });
  });

  it('are read from the environment', () => {
    const config = loadConfig({
      SESSION_RECONNECT_BASE_DELAY_MS: '250',
      SESSION_RECONNECT_MAX_DELAY_MS: '5000',
      SESSION_RECONNECT_JITTER: '0',
      SESSION_RECONNECT_MAX_ATTEMPTS: '3',
      SANDBOX_DELIVERED_DELAY_MS: '0',
      SANDBOX_READ_DELAY_MS: '10',
    });
    expect(config.reconnect).toEqual({ baseDelayMs: 250, maxDelayMs: 5_000, jitter: 0, maxAttempts: 3 });
    expect(config.sandbox).toEqual({ deliveredDelayMs: 0, readDelayMs: 10 });
  });

  it.each([
    ['SESSION_RECONNECT_BASE_DELAY_MS', 'soon'],
    ['SESSION_RECONNECT_MAX_DELAY_MS', '-1'],
    ['SESSION_RECONNECT_JITTER', '1.5'],
    ['SESSION_RECONNECT_MAX_ATTEMPTS', '0'],
    ['SANDBOX_DELIVERED_DELAY_MS', '1.5'],
    ['SANDBOX_READ_DELAY_MS', 'x'],
  ])('a bad %s stops the start naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(variable);
  });
});
