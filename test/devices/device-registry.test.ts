/**
 * Registry commands answer from the decided state: a write that succeeded answers success even when the
 * read models are too slow to include it in time (they catch up later).
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeviceRegistry, createDeviceCommands } from '../../src/devices/device-registry.js';
import { DevicesReadModel } from '../../src/devices/devices-read-model.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/gateway.js';
import { TestClock } from '../support/test-clock.js';

describe('DeviceRegistry', () => {
  let store: SqliteEventStore;
  let db: ReturnType<typeof openReadModelDb>;
  beforeEach(() => {
    const dir = tempDir('dmg-registry-');
    store = new SqliteEventStore(join(dir, 'events.sqlite'));
    db = openReadModelDb(dir);
  });
  afterEach(async () => {
    await store.close();
    db.close();
  });

  it('answers a create and an update from the decided state while the read models lag', async () => {
    const devices = new DevicesReadModel(db);
    // Never started: it never reaches any position, and gives up waiting after 10 s on a clock the test moves on.
    const clock = new TestClock();
    const lagging = new ProjectionRunner(store, db, [devices], pino({ level: 'silent' }), 10_000, clock);
    const registry = new DeviceRegistry(createDeviceCommands(store), lagging, () => undefined, 'sandbox');
    /** Answered once the wait for the read models has run out. */
    const pastTheWait = async <T>(command: Promise<T>): Promise<T> => {
      await eventually(() => clock.pending().length > 0, 'the command to wait for the read models');
      await clock.advance(10_000);
      return command;
    };
    const created = await pastTheWait(registry.create({ id: 'lag-1', name: 'Lagging', metadata: { a: 1 } }));
    expect(created).toMatchObject({
      id: 'lag-1',
      name: 'Lagging',
      engine: 'sandbox',
      metadata: { a: 1 },
      session: { state: 'closed' },
    });
    expect(created.deviceKey).toMatch(/^dk_/);
    expect(created.createdAt).toBe(created.updatedAt);
    const updated = await pastTheWait(registry.update('lag-1', { name: 'Renamed' }));
    expect(updated).toMatchObject({ id: 'lag-1', name: 'Renamed', metadata: { a: 1 }, createdAt: created.createdAt });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    await expect(registry.update('nobody', { name: 'x' })).rejects.toMatchObject({
      code: 'not_found',
      message: 'device "nobody" does not exist',
    });
  });

  it('answers what a GET answers once the read models caught up', async () => {
    const devices = new DevicesReadModel(db);
    const runner = new ProjectionRunner(store, db, [devices], pino({ level: 'silent' }));
    await runner.start();
    const registry = new DeviceRegistry(
      createDeviceCommands(store),
      runner,
      (id) => devices.get(id)?.session,
      'sandbox',
    );
    const { deviceKey: _key, ...created } = await registry.create({ name: 'Same' });
    expect(devices.get(created.id)).toEqual(created);
    const { deviceKey, ...rotated } = await registry.update(created.id, { metadata: { b: 2 }, rotateKey: true });
    expect(deviceKey).toMatch(/^dk_/);
    expect(devices.get(created.id)).toEqual(rotated);
    await runner.stop();
  });
});
