import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { DevicesReadModel } from '../../src/devices/devices-read-model.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { DeviceRegistry, createDeviceCommandHandler } from '../../src/devices/device-registry.js';
import { tempDir } from '../support/temp-dir.js';

const log = pino({ level: 'silent' });

/** Counts events per stream; counts every apply so re-processing would show. */
class CountingProjection implements Projection {
  readonly name = 'counts';
  readonly handles = new Set(['Tick', 'Boom']);
  applied = 0;
  constructor(readonly version = 1) {}
  setup(db: Database.Database) {
    db.exec('CREATE TABLE IF NOT EXISTS counts (stream TEXT PRIMARY KEY, n INTEGER NOT NULL)');
  }
  reset(db: Database.Database) {
    db.exec('DELETE FROM counts');
  }
  apply(event: StoredEvent, db: Database.Database) {
    this.applied++;
    db.prepare('INSERT INTO counts (stream, n) VALUES (?, 1) ON CONFLICT(stream) DO UPDATE SET n = n + 1').run(event.streamId);
    if (event.type === 'Boom') throw new Error('a handler bug');
  }
}

const dump = (db: Database.Database, table: string) => db.prepare(`SELECT * FROM ${table} ORDER BY 1`).all();

describe('projection runner', () => {
  it('waits for its own append, resumes after a restart without re-applying, and rebuilds to the same result', async () => {
    const dir = tempDir();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    let db = openReadModelDb(dir);
    let counts = new CountingProjection();
    let runner = new ProjectionRunner(store, db, [counts], log);
    await runner.start();
    for (let i = 0; i < 30; i++) {
      const { position } = await store.append(`s-${i % 3}`, [{ type: 'Tick', data: {} }]);
      await runner.waitFor(position);
      expect(runner.position).toBeGreaterThanOrEqual(position);
    }
    // A failing handler leaves no partial write and does not stall the read model.
    const boom = await store.append('s-boom', [{ type: 'Boom', data: {} }, { type: 'Tick', data: {} }]);
    await runner.waitFor(boom.position);
    expect(dump(db, 'counts')).toEqual([
      { stream: 's-0', n: 10 },
      { stream: 's-1', n: 10 },
      { stream: 's-2', n: 10 },
      { stream: 's-boom', n: 1 },
    ]);
    const live = dump(db, 'counts');
    await runner.stop();
    db.close();

    // Restart: the checkpoint says everything is applied.
    db = openReadModelDb(dir);
    counts = new CountingProjection();
    runner = new ProjectionRunner(store, db, [counts], log);
    await runner.start();
    expect(counts.applied).toBe(0);
    expect(dump(db, 'counts')).toEqual(live);

    const rebuilt = await runner.rebuild();
    expect(rebuilt.events).toBe(32);
    expect(dump(db, 'counts')).toEqual(live);

    // Still live after the rebuild.
    const more = await store.append('s-0', [{ type: 'Tick', data: {} }]);
    await runner.waitFor(more.position);
    expect(dump(db, 'counts')[0]).toEqual({ stream: 's-0', n: 11 });
    await runner.stop();
    db.close();

    // A new projection version rebuilds on start.
    db = openReadModelDb(dir);
    const v2 = new CountingProjection(2);
    runner = new ProjectionRunner(store, db, [v2], log);
    await runner.start();
    // 33 events in one batch: the 31 up to the failing one, then the batch again, event by event (33).
    expect(v2.applied).toBe(31 + 33);
    expect(dump(db, 'counts')).toEqual([...live.slice(0, 1).map(() => ({ stream: 's-0', n: 11 })), ...live.slice(1)]);
    await runner.stop();
    db.close();
    await store.close();
  });

  it('times out a wait the read models cannot reach', async () => {
    const dir = tempDir();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    const db = openReadModelDb(dir);
    const runner = new ProjectionRunner(store, db, [new CountingProjection()], log, 50);
    await runner.start();
    await expect(runner.waitFor(1_000_000)).rejects.toThrow(/did not reach/);
    await runner.stop();
    await store.close();
  });

  it('rebuilding the devices read model from position 0 gives the same rows', async () => {
    const dir = tempDir();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    const db = openReadModelDb(dir);
    const devices = new DevicesReadModel(db);
    const runner = new ProjectionRunner(store, db, [devices], log);
    await runner.start();
    const registry = new DeviceRegistry(createDeviceCommandHandler(store), runner, (id) => devices.get(id)?.session, 'sandbox');
    for (let i = 0; i < 20; i++) await registry.create({ id: `d-${i}`, name: `n-${i}`, metadata: { i } });
    for (let i = 0; i < 20; i += 3) await registry.update(`d-${i}`, { name: `renamed-${i}`, rotateKey: i % 2 === 0 });
    for (let i = 0; i < 20; i += 5) await registry.delete(`d-${i}`);
    const live = dump(db, 'devices');
    expect(live).toHaveLength(16);
    await runner.rebuild();
    expect(dump(db, 'devices')).toEqual(live);
    await runner.stop();
    await store.close();
  });
});
