/**
 * The machine projector (GATEWAY_PROCESSES' primary, src/cluster/machine-projector.ts) follows what other
 * processes append to the one SQLite file, projects it into read-models.sqlite, and tells the workers how far
 * it got and which cached views (by read model and key) the batch changed; it records the workers' key uses.
 */
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type MachineProjector, startMachineProjector } from '../../src/cluster/machine-projector.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import type { ChangedMessage, ProjectedMessage } from '../../src/projections/projector-link.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { eventually } from '../support/eventually.js';
import { tempDir, testConfig } from '../support/gateway.js';

describe('machine projector', () => {
  let projector: MachineProjector | undefined;
  let store: SqliteEventStore | undefined;
  afterEach(async () => {
    await projector?.stop();
    projector = undefined;
    await store?.close();
    store = undefined;
  });

  it("projects another process's appends once into read-models.sqlite and tells how far, with the devices changed", async () => {
    const dataDir = tempDir('dmg-machine-projector-unit-');
    const config = testConfig({ DATA_DIR: dataDir, GATEWAY_PROCESSES: '2', EVENTSTORE_URL: '' });
    projector = await startMachineProjector(config, pino({ level: 'silent' }));
    const messages: Array<ProjectedMessage | ChangedMessage> = [];
    projector.onMessage = (message) => messages.push(message);
    expect(projector.status()).toMatchObject({ dmg: 'projected', main: 0, failing: false, work: [] });

    // A worker's append, through a connection of its own on the same file.
    store = new SqliteEventStore(join(dataDir, 'events.sqlite'), { sharedFile: true });
    const at = new Date().toISOString();
    const appended = await store.append('device-p1', [
      {
        type: 'DeviceCreated',
        data: { deviceId: 'p1', name: 'P1', engine: 'sandbox', metadata: {}, keyHash: 'h'.repeat(64), at },
      },
    ]);
    const projected = () => messages.filter((m): m is ProjectedMessage => m.dmg === 'projected');
    await eventually(() => projected().some((m) => m.main >= appended.position), 'the projector reached the append');
    const reached = projected().find((m) => m.main >= appended.position)!;
    expect(messages.find((m) => m.dmg === 'changed')).toEqual({
      dmg: 'changed',
      keys: [['devices', 'p1']],
    });
    expect(reached.webhooks).toBeGreaterThanOrEqual(appended.position);

    // Written once, into the one file every worker opens.
    const db = openReadModelDb(dataDir, 'read-models.sqlite', { follower: true });
    try {
      const row = db.prepare('SELECT id, name FROM devices WHERE id = ?').get('p1');
      expect(row).toEqual({ id: 'p1', name: 'P1' });
    } finally {
      db.close();
    }
  });

  it('tells the workers each changed key by read model (a global webhook, a deleted key), before the position', async () => {
    const dataDir = tempDir('dmg-machine-projector-unit-');
    const config = testConfig({ DATA_DIR: dataDir, GATEWAY_PROCESSES: '2', EVENTSTORE_URL: '' });
    projector = await startMachineProjector(config, pino({ level: 'silent' }));
    const messages: Array<ProjectedMessage | ChangedMessage> = [];
    projector.onMessage = (message) => messages.push(message);
    store = new SqliteEventStore(join(dataDir, 'events.sqlite'), { sharedFile: true });
    const at = new Date().toISOString();
    const keyHash = 'k'.repeat(64);
    await store.append('device-p2', [
      {
        type: 'DeviceCreated',
        data: { deviceId: 'p2', name: 'P2', engine: 'sandbox', metadata: {}, keyHash: 'h'.repeat(64), at },
      },
      {
        type: 'DeviceKeyCreated',
        data: { deviceId: 'p2', keyId: 'key_1', name: 'ci', scopes: ['read'], keyHash, at },
      },
    ]);
    // A global webhook's events carry no device id: the old projector told the workers nothing of it.
    const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    await store.append('webhook-settings-_global', [
      {
        type: 'WebhookCreated',
        data: { webhookId: 'gwh_1', url: 'https://example.com/in', events: ['*'], secret, at },
      },
    ]);
    const deleted = await store.append('device-p2', [
      { type: 'DeviceKeyDeleted', data: { deviceId: 'p2', keyId: 'key_1', keyHash, at } },
    ]);
    const keysOf = (model: string) =>
      messages.flatMap((m) => (m.dmg === 'changed' ? m.keys.filter(([name]) => name === model).map(([, k]) => k) : []));
    await eventually(
      () => messages.some((m) => m.dmg === 'projected' && m.main >= deleted.position && m.webhooks >= deleted.position),
      'the projector reached the deletion',
    );
    expect(keysOf('webhooks')).toContain('_global');
    expect(keysOf('device-keys')).toContain(keyHash);
    // A webhook's rows did not change for the device's other events: its cached webhooks stay.
    expect(keysOf('webhooks')).not.toContain('p2');
    // Each batch's changes come before its position (a request released by it reads the rows as committed).
    const lastChanged = messages.findLastIndex((m) => m.dmg === 'changed' && m.keys.some(([, k]) => k === keyHash));
    expect(messages[lastChanged + 1]).toMatchObject({ dmg: 'projected' });
  });

  it("records the workers' key uses in the file it writes", async () => {
    const dataDir = tempDir('dmg-machine-projector-unit-');
    const config = testConfig({ DATA_DIR: dataDir, GATEWAY_PROCESSES: '2', EVENTSTORE_URL: '' });
    projector = await startMachineProjector(config, pino({ level: 'silent' }));
    const used = Date.parse('2026-01-02T03:04:05.000Z');
    projector.receive({ dmg: 'key-use', uses: [['u'.repeat(64), used]] });
    projector.receive({ dmg: 'something else' });
    // Written at the next flush at the latest: stopping flushes.
    await projector.stop();
    projector = undefined;
    const db = openReadModelDb(dataDir, 'read-models.sqlite', { follower: true });
    try {
      const row = db.prepare('SELECT last_used_at FROM key_usage WHERE key_hash = ?').get('u'.repeat(64));
      expect(row).toEqual({ last_used_at: new Date(used).toISOString() });
    } finally {
      db.close();
    }
  });
});
