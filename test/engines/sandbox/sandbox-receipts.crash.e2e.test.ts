/**
 * kill -9 between a sandbox message's `sent` and its `read`: the network's timers die with the process,
 * but the messages' statuses do not, so after the restart every message still gets its remaining
 * receipts, and each status is recorded once.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type ChildGateway, spawnGateway } from '../../support/child-gateway.js';
import { eventually } from '../../support/eventually.js';
import { apiClient, tempDir } from '../../support/gateway.js';
import { createDevice, goOnline, outboxList, send } from '../../outbox/support/sandbox-devices.js';

const ENV = {
  DEFAULT_ENGINE: 'sandbox',
  OUTBOX_SPACING: '0ms',
  OUTBOX_RATE_PER_MINUTE: '1000000',
  SANDBOX_DELIVERED_DELAY_MS: '400',
  SANDBOX_READ_DELAY_MS: '2500',
};

function statusesIn(dataDir: string): Array<{ waMessageId: string; status: string }> {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    return db
      .prepare<[], { data: string }>(
        "SELECT data FROM events WHERE stream_id = 'outbox-shop' AND type = 'MessageStatusChanged' ORDER BY position",
      )
      .all()
      .map((row) => JSON.parse(row.data) as { waMessageId: string; status: string });
  } finally {
    db.close();
  }
}

describe('sandbox receipts across kill -9', () => {
  let gateway: ChildGateway | undefined;
  afterEach(async () => {
    await gateway?.kill().catch(() => undefined);
    gateway = undefined;
  });

  it('every acknowledged message reaches read after the restart, each status once', async () => {
    const dataDir = tempDir('dmg-sandbox-receipts-');
    gateway = await spawnGateway(dataDir, ENV);
    let api = apiClient(gateway.url);
    const shop = await createDevice(api, 'shop', '4915100000011');
    await goOnline(api, shop);

    const sent = await Promise.all(
      Array.from({ length: 30 }, (_, i) => send(api, shop, `49151000001${String(i).padStart(2, '0')}`, `m${i}`)),
    );
    const ids = sent.map((s) => s.waMessageId);
    await eventually(async () => (await outboxList(api, shop)).length === 0, 'every message sent');
    // Some got their `delivered`, none their `read`: then the process dies.
    await eventually(() => statusesIn(dataDir).some((s) => s.status === 'delivered'), 'a delivered receipt');
    await gateway.kill();
    const before = statusesIn(dataDir);
    expect(before.some((s) => s.status === 'read')).toBe(false);

    gateway = await spawnGateway(dataDir, ENV);
    api = apiClient(gateway.url);
    await eventually(
      () => {
        const read = new Set(
          statusesIn(dataDir)
            .filter((s) => s.status === 'read')
            .map((s) => s.waMessageId),
        );
        return ids.every((id) => read.has(id));
      },
      'every message to be read',
      20_000,
    );
    const after = statusesIn(dataDir);
    for (const id of ids) {
      expect(
        after.filter((s) => s.waMessageId === id).map((s) => s.status),
        id,
      ).toEqual(['sent', 'delivered', 'read']);
    }
  }, 60_000);
});
