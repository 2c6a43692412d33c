import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { apiClient } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';
import { CHILD_GATEWAY_TESTS, type ChildGateway, spawnGateway } from '../support/child-gateway.js';
import { onEsdbTestServer } from '../support/test-store.js';

describe('kill -9 in the middle of work', CHILD_GATEWAY_TESTS, () => {
  let gateway: ChildGateway | undefined;
  afterEach(async () => {
    await gateway?.kill().catch(() => undefined);
    gateway = undefined;
  });

  it('keeps every acknowledged create, and the store opens cleanly', async () => {
    const dataDir = tempDir('dmg-crash-');
    gateway = await spawnGateway(dataDir);
    const api = apiClient(gateway.url);
    const total = 600;
    const acknowledged: string[] = [];
    let killed = false;
    const killAt = 300;
    // Creates keep arriving concurrently; the process dies as soon as `killAt` of them were answered 201.
    const inFlight = Array.from({ length: total }, async (_, i) => {
      const id = `crash-${i}`;
      try {
        const answer = await api('POST', '/devices', { admin: true, json: { id, name: id } });
        if (answer.status === 201 && !killed) {
          acknowledged.push(id);
          if (acknowledged.length >= killAt) {
            killed = true;
            await gateway!.kill();
          }
        }
      } catch {
        // connection cut by the kill: not acknowledged, so not promised
      }
    });
    await Promise.all(inFlight);
    expect(killed).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(killAt);

    // SQLite's own check of its files (the events too, unless they live on EventStoreDB), before the gateway touches them again.
    for (const file of onEsdbTestServer ? ['read-models.sqlite'] : ['events.sqlite', 'read-models.sqlite']) {
      const db = new Database(join(dataDir, file));
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    }

    gateway = await spawnGateway(dataDir);
    const after = apiClient(gateway.url);
    const present = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: { body: { items: Array<{ id: string }>; nextCursor: string | null } } = await after(
        'GET',
        `/devices?limit=500${cursor ? `&cursor=${cursor}` : ''}`,
        { admin: true },
      );
      for (const device of page.body.items) present.add(device.id);
      cursor = page.body.nextCursor;
    } while (cursor);
    const lost = acknowledged.filter((id) => !present.has(id));
    expect(lost).toEqual([]);
    // Every device that exists is whole: readable, and its key check works.
    const sample = await after('GET', `/devices/${acknowledged[0]}`, { admin: true });
    expect(sample.status).toBe(200);
    expect((await after('GET', '/health')).body.store.ok).toBe(true);
  });
});
