/**
 * The short chaos run (bench/lib/chaos.ts; `npm run chaos` runs the long one): kill -9 cycles of a child
 * gateway under send and sandbox inbound load, with a webhook receiver going down and up. Nothing
 * acknowledged is lost, no Idempotency-Key is queued twice, every webhook arrives under one id per event.
 */
import { describe, expect, it } from 'vitest';
import { runChaos } from '../bench/lib/chaos.js';

describe('chaos: kill -9 under load, with a flapping webhook receiver', () => {
  it('loses nothing acknowledged, sends nothing under two ids, delivers every webhook under one id', async () => {
    const report = await runChaos({
      cycles: 3,
      devices: 2,
      runMs: [1_000, 1_500],
      sendClients: 4,
      inboundClients: 2,
      settleTimeoutMs: 60_000,
    });
    expect(report.failures).toEqual([]);
    expect(report.sends.acknowledged).toBeGreaterThan(0);
    expect(report.inbound.acknowledged).toBeGreaterThan(0);
    expect(report.webhooks.receiverOutages).toBeGreaterThan(0);
  }, 180_000);
});
