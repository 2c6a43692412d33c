/**
 * status: a status (story) to an audience of 5,000 contacts, on the real gateway (a child process, one sandbox
 * device online). Each `POST /status/text` names its 5,000 numbers (`audience`); the 202 comes once the send is
 * durable (its `OutboxMessageQueued`, audience included, appended) and projected, and the sandbox then sends it:
 * the bench waits until `GET /messages/:waMessageId` says `sent` before the next one, so each 202 is timed on an
 * idle outbox. The rate cap and the outbox's human-looking pause are lifted (`OUTBOX_RATE_PER_MINUTE`,
 * `OUTBOX_SPACING=0ms`): they would hold the sends, not show their cost.
 *
 * Figures: the 202's p50 and p99 (target ≤ 200 ms), 202 → `sent` (context), and how many were sent (all).
 * `BENCH_STATUS_COUNT` sets how many statuses are timed (default 30, after 3 not timed).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Metric } from './lib/benchmark.js';
import { gatewayRequest, onlineSandboxDevice, progress } from './lib/gateway-requests.js';
import { type GatewayChild, spawnGateway } from './lib/child.js';
import { percentile, round } from './lib/stats.js';

export const name = 'status';
export const description =
  'POST /status/text to an audience of 5,000 contacts on a sandbox device: 202 latency (p99 target ≤ 200 ms), then sent by the sandbox';

const AUDIENCE = 5_000;
const WARMUP = 3;
const DEVICE = 'poster';

export async function run(): Promise<Metric[]> {
  const count = Number(process.env.BENCH_STATUS_COUNT ?? 30);
  if (!Number.isInteger(count) || count < 1) throw new Error(`BENCH_STATUS_COUNT must be a whole number ≥ 1`);
  const gateway = await spawnGateway({
    env: { DEFAULT_ENGINE: 'sandbox', OUTBOX_SPACING: '0ms', OUTBOX_RATE_PER_MINUTE: '1000000' },
  });
  try {
    const { key } = await onlineSandboxDevice(gateway, DEVICE, '4915100000001');
    const audience = Array.from({ length: AUDIENCE }, (_, i) => `4916${String(i).padStart(9, '0')}`);
    const accepted: number[] = [];
    const untilSent: number[] = [];
    for (let i = 0; i < WARMUP + count; i++) {
      const started = performance.now();
      const { waMessageId } = await gatewayRequest<{ waMessageId: string }>(
        gateway,
        'POST',
        `/devices/${DEVICE}/status/text`,
        { text: `Status ${i}`, audience },
        202,
        key,
      );
      const answeredAt = performance.now();
      await waitUntilSent(gateway, key, waMessageId);
      if (i < WARMUP) continue;
      accepted.push(answeredAt - started);
      untilSent.push(performance.now() - answeredAt);
    }
    accepted.sort((a, b) => a - b);
    untilSent.sort((a, b) => a - b);
    progress(`${count} statuses to ${AUDIENCE} contacts accepted and sent`);
    return [
      {
        metric: `status to ${AUDIENCE} contacts: 202 p99`,
        value: round(percentile(accepted, 99), 1),
        unit: 'ms',
        target: { op: '<=', value: 200 },
      },
      { metric: `status to ${AUDIENCE} contacts: 202 p50`, value: round(percentile(accepted, 50), 1), unit: 'ms' },
      {
        metric: `status to ${AUDIENCE} contacts: 202 → sent p50`,
        value: round(percentile(untilSent, 50), 1),
        unit: 'ms',
      },
      { metric: `status to ${AUDIENCE} contacts: 202 → sent max`, value: round(untilSent.at(-1)!, 1), unit: 'ms' },
      {
        metric: `status to ${AUDIENCE} contacts: sent by the sandbox`,
        value: untilSent.length,
        unit: 'statuses',
        target: { op: '>=', value: count },
      },
    ];
  } finally {
    await gateway.stop();
  }
}

/** Polls the message until the sandbox has sent it (10 ms apart, 30 s at most). */
async function waitUntilSent(gateway: GatewayChild, key: string, waMessageId: string): Promise<void> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const message = await gatewayRequest<{ status: string }>(
      gateway,
      'GET',
      `/devices/${DEVICE}/messages/${waMessageId}`,
      undefined,
      200,
      key,
    );
    if (message.status !== 'queued') {
      if (message.status === 'failed') throw new Error(`the status ${waMessageId} failed`);
      return;
    }
    if (performance.now() > deadline) throw new Error(`the status ${waMessageId} was not sent in 30 s`);
    await sleep(10);
  }
}
