/**
 * SIGKILL while the outbox drains, then a restart on the same data: no acknowledged message is lost,
 * and none reaches the network twice under different ids. The sandbox is the network: the recipient is
 * another sandbox device, whose inbox records what arrived (by waMessageId).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CHILD_GATEWAY_TESTS, type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { apiClient } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { type SandboxDevice, createDevice, goOnline, outboxList } from './support/sandbox-devices.js';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { eventually } from '../support/eventually.js';
import { openTestStore } from '../support/test-store.js';

const ENV = {
  DEFAULT_ENGINE: 'sandbox',
  OUTBOX_SPACING: '0ms',
  OUTBOX_RATE_PER_MINUTE: '1000000',
  SANDBOX_DELIVERED_DELAY_MS: '10',
  SANDBOX_READ_DELAY_MS: '10',
};

describe('kill -9 while the outbox drains', CHILD_GATEWAY_TESTS, () => {
  let gateway: ChildGateway | undefined;
  afterEach(async () => {
    await gateway?.kill().catch(() => undefined);
    gateway = undefined;
  });

  it('loses no acknowledged message and sends none twice under different ids', async () => {
    const dataDir = tempDir('dmg-outbox-crash-');
    gateway = await spawnGateway(dataDir, ENV);
    let api = apiClient(gateway.url);
    const shop: SandboxDevice = await createDevice(api, 'shop', '4915100000011');
    const customer: SandboxDevice = await createDevice(api, 'customer', '4915100000022');
    await goOnline(api, customer);
    await goOnline(api, shop);

    const total = 600;
    const killAt = 250;
    const acknowledged = new Map<string, { outboxId: string; waMessageId: string }>();
    let killed = false;
    let next = 0;
    // 25 clients send as fast as they are answered; the process dies once `killAt` sends were answered 202.
    const client = async () => {
      while (next < total && !killed) {
        const text = `msg-${next++}`;
        try {
          const answer = await api('POST', '/devices/shop/send/text', {
            deviceKey: shop.key,
            json: { to: customer.phone, text },
          });
          if (answer.status === 202 && !killed) {
            acknowledged.set(text, { outboxId: answer.body.outboxId, waMessageId: answer.body.waMessageId });
            if (acknowledged.size >= killAt) {
              killed = true;
              await gateway!.kill();
            }
          }
        } catch {
          // cut by the kill: not acknowledged, not promised
        }
      }
    };
    await Promise.all(Array.from({ length: 25 }, client));
    expect(killed).toBe(true);

    const sentBeforeRestart = await sentIds(dataDir);
    gateway = await spawnGateway(dataDir, ENV);
    api = apiClient(gateway.url);
    // Both sessions resume on their own (they were online); the shop's outbox drains.
    await eventually(
      async () => (await outboxList(api, shop)).length === 0,
      'the outbox drained after the restart',
      30_000,
    );
    await gateway.stop();
    gateway = undefined;

    const rows = await readStreams(dataDir, ['outbox-shop', 'inbox-customer']);
    const queued = rows
      .filter((r) => r.type === 'OutboxMessageQueued')
      .map((r) => r.data as { outboxId: string; waMessageId: string; content: { text: string } });
    const sent = rows
      .filter((r) => r.type === 'MessageStatusChanged')
      .map((r) => r.data as { outboxId?: string; waMessageId: string; status: string });
    const arrived = rows
      .filter((r) => r.type === 'MessageReceived')
      .map((r) => r.data as { waMessageId: string; body: string });

    // Nothing acknowledged is lost: each is queued once, with the id it was answered with, and sent.
    const sentOutboxIds = new Set(sent.filter((s) => s.status === 'sent').map((s) => s.outboxId));
    for (const [text, answer] of acknowledged) {
      const records = queued.filter((q) => q.content.text === text);
      expect(records, text).toHaveLength(1);
      expect(records[0]).toMatchObject(answer);
      expect(sentOutboxIds.has(answer.outboxId), `${text} sent`).toBe(true);
    }
    // Nothing is recorded sent twice.
    const sentTwice = sent.filter((s) => s.status === 'sent').map((s) => s.outboxId);
    expect(new Set(sentTwice).size).toBe(sentTwice.length);
    // What the network delivered: every message under the one id it was queued with, never under another.
    const idOfText = new Map(queued.map((q) => [q.content.text, q.waMessageId]));
    const idsByText = new Map<string, Set<string>>();
    for (const message of arrived)
      idsByText.set(message.body, (idsByText.get(message.body) ?? new Set()).add(message.waMessageId));
    for (const [text, ids] of idsByText) {
      expect([...ids], text).toEqual([idOfText.get(text)]);
    }
    // The drain really was under way when the process died, and went on after it.
    expect(sentBeforeRestart).toBeGreaterThan(0);
    expect(sentTwice.length).toBeGreaterThan(sentBeforeRestart);
  });
});

/** The streams' events in log order, read from the store the gateway used (its SQLite file or its test server). */
async function readStreams(dataDir: string, streams: string[]): Promise<StoredEvent[]> {
  const store = await openTestStore(dataDir);
  try {
    const events = (await Promise.all(streams.map((stream) => store.readStream(stream)))).flat();
    return events.sort((a, b) => a.position - b.position);
  } finally {
    await store.close();
  }
}

async function sentIds(dataDir: string): Promise<number> {
  const rows = await readStreams(dataDir, ['outbox-shop']);
  return rows.filter((r) => r.type === 'MessageStatusChanged' && (r.data as { status: string }).status === 'sent')
    .length;
}
