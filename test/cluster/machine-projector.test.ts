/**
 * The machine projector (GATEWAY_PROCESSES' primary, src/cluster/machine-projector.ts) follows what other
 * processes append to the one SQLite file, projects it into read-models.sqlite, and tells the workers how far
 * it got and which devices' rows changed.
 */
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type MachineProjector, startMachineProjector } from '../../src/cluster/machine-projector.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import type { ProjectedMessage } from '../../src/projections/projector-link.js';
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
    const messages: ProjectedMessage[] = [];
    projector.onMessage = (message) => messages.push(message);
    expect(projector.status()).toMatchObject({ dmg: 'projected', main: 0, failing: false, devices: [] });

    // A worker's append, through a connection of its own on the same file.
    store = new SqliteEventStore(join(dataDir, 'events.sqlite'), { sharedFile: true });
    const at = new Date().toISOString();
    const appended = await store.append('device-p1', [
      {
        type: 'DeviceCreated',
        data: { deviceId: 'p1', name: 'P1', engine: 'sandbox', metadata: {}, keyHash: 'h'.repeat(64), at },
      },
    ]);
    await eventually(() => messages.some((m) => m.main >= appended.position), 'the projector reached the append');
    const reached = messages.find((m) => m.main >= appended.position)!;
    expect(reached.devices).toContain('p1');
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
});
