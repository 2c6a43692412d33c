import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import type { Projection } from '../../src/projections/projection.js';
import { CHECKPOINT_LAG_EVENTS, ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { tempDir } from '../support/temp-dir.js';

const log = pino({ level: 'silent' });

/** Counts the events of one type, and every apply (re-processing would show). */
class TypeCount implements Projection {
  readonly version = 1;
  readonly handles: ReadonlySet<string>;
  applied = 0;
  constructor(
    readonly name: string,
    type: string,
  ) {
    this.handles = new Set([type]);
  }
  setup(db: Database.Database) {
    db.exec(
      `CREATE TABLE IF NOT EXISTS "${this.name}" (n INTEGER NOT NULL); INSERT INTO "${this.name}" SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM "${this.name}")`,
    );
  }
  reset(db: Database.Database) {
    db.exec(`UPDATE "${this.name}" SET n = 0`);
  }
  apply(_event: StoredEvent, db: Database.Database) {
    this.applied++;
    db.exec(`UPDATE "${this.name}" SET n = n + 1`);
  }
}

it('a batch no read model takes commits nothing; a checkpoint moves with the events its read model took, or once it lags too far', async () => {
  const dir = tempDir();
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  const db = openReadModelDb(dir);
  // Another connection sees each commit of the runner's as a new data_version.
  const watcher = new Database(join(dir, 'read-models.sqlite'), { readonly: true });
  const version = () => watcher.pragma('data_version', { simple: true }) as number;
  const checkpoints = () =>
    Object.fromEntries(
      (
        db.prepare('SELECT name, position FROM projection_checkpoints').all() as Array<{
          name: string;
          position: number;
        }>
      ).map((row) => [row.name, row.position]),
    );
  const ticks = new TypeCount('ticks', 'Tick');
  const tocks = new TypeCount('tocks', 'Tock');
  const runner = new ProjectionRunner(store, db, [ticks, tocks], log);
  await runner.start();
  const tick = await store.append('s', [{ type: 'Tick', data: {} }]);
  await runner.waitFor(tick.position);
  // Only the read model that took an event writes its checkpoint.
  expect(checkpoints()).toEqual({ ticks: tick.position, tocks: 0 });

  // Nobody takes these: the position moves (a request waiting for it is answered), no transaction commits.
  const before = version();
  const noise = await store.append('s', [
    { type: 'Noise', data: {} },
    { type: 'Noise', data: {} },
  ]);
  await runner.waitFor(noise.position);
  expect(runner.position).toBe(noise.position);
  expect(version()).toBe(before);
  expect(checkpoints()).toEqual({ ticks: tick.position, tocks: 0 });

  const tock = await store.append('s', [{ type: 'Tock', data: {} }]);
  await runner.waitFor(tock.position);
  expect(checkpoints()).toEqual({ ticks: tick.position, tocks: tock.position });

  // A checkpoint lagging CHECKPOINT_LAG_EVENTS behind is written even so.
  const many = await store.append(
    's',
    Array.from({ length: CHECKPOINT_LAG_EVENTS }, () => ({ type: 'Noise', data: {} })),
  );
  await runner.waitFor(many.position);
  expect(checkpoints()).toEqual({ ticks: many.position, tocks: many.position });
  const more = await store.append('s', [
    { type: 'Noise', data: {} },
    { type: 'Tick', data: {} },
  ]);
  await runner.waitFor(more.position);
  await runner.stop();

  // A restart reads again only what its checkpoints left behind, and applies nothing twice.
  const again = [new TypeCount('ticks', 'Tick'), new TypeCount('tocks', 'Tock')];
  const restarted = new ProjectionRunner(store, db, again, log);
  await restarted.start();
  expect(restarted.position).toBe(more.position);
  expect(again.map((p) => p.applied)).toEqual([0, 0]);
  expect(db.prepare('SELECT (SELECT n FROM ticks), (SELECT n FROM tocks)').raw().get()).toEqual([2, 1]);
  await restarted.stop();
  watcher.close();
  db.close();
  await store.close();
});
