import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

describe('webhook settings', () => {
  it('reads durations, fractions and limits, and names a bad variable', () => {
    const { webhooks } = loadConfig({
      WEBHOOK_RETRY_SCHEDULE: '250ms, 5s,2m,1h,1d',
      WEBHOOK_RETRY_JITTER: '0',
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_HOST_RATE_PER_SECOND: '50',
      WEBHOOK_RETENTION: '36h',
    });
    expect(webhooks).toEqual({
      retrySchedule: [250, 5_000, 120_000, 3_600_000, 86_400_000],
      retryJitter: 0,
      timeoutMs: 2_500,
      concurrency: 8,
      hostRatePerSecond: 50,
      retentionMs: 129_600_000,
    });
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: 'none' }).webhooks.retrySchedule).toEqual([]);
    expect(loadConfig({}).webhooks).toMatchObject({ timeoutMs: 10_000, retentionMs: 7 * 86_400_000 });
    for (const [name, value] of [
      ['WEBHOOK_RETRY_SCHEDULE', '5s,soon'],
      ['WEBHOOK_RETRY_SCHEDULE', '2d'],
      ['WEBHOOK_RETRY_JITTER', '1.5'],
      ['WEBHOOK_RETRY_JITTER', '-0.1'],
      ['WEBHOOK_TIMEOUT_MS', '10s'],
      ['WEBHOOK_CONCURRENCY', '0'],
      ['WEBHOOK_HOST_RATE_PER_SECOND', 'fast'],
      ['WEBHOOK_RETENTION', '5s'],
    ] as const) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(
        expect.objectContaining({ variable: name }),
      );
    }
  });
});
