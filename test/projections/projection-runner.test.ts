import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { type StoredEvent, StoreUnavailableError } from '../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../src/eventstore/sqlite/sqlite-event-store.js';
import { DevicesReadModel } from '../../src/devices/devices-read-model.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/projection-runner.js';
import { openReadModelDb } from '../../src/projections/read-model-db.js';
import { DeviceRegistry, createDeviceCommands } from '../../src/devices/device-registry.js';
import { BufferedCountingProjection } from '../support/buffered-counting-projection.js';
import { TestClock } from '../support/test-clock.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp-dir.js';
import Database from 'better-sqlite3';
import { openEventStoreDbStore } from '../../src/eventstore/eventstoredb/eventstoredb-event-store.js';
import type { EventStore } from '../../src/eventstore/event-store.js';
import { startEsdbTestServer } from '../support/esdb-test-server.js';

const log = pino({ level: 'silent' });
/** `count` Tick events to append. */
const ticks = (count: number) => Array.from({ length: count }, () => ({ type: 'Tick', data: {} }));

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
    db.prepare('INSERT INTO counts (stream, n) VALUES (?, 1) ON CONFLICT(stream) DO UPDATE SET n = n + 1').run(
      event.streamId,
    );
    if (event.type === 'Boom') throw new Error('a handler bug');
  }
}

/** A read model of Tick events that only watches them being applied. */
const watchingTicks = (apply: Projection['apply']): Projection => ({
  name: 'watching',
  version: 1,
  handles: new Set(['Tick']),
  setup() {},
  reset() {},
  apply,
});

const dump = (db: Database.Database, table: string) => db.prepare(`SELECT * FROM ${table} ORDER BY 1`).all();

/**
 * A buffered read model with one event applied; then `fail` makes its writes fail and a batch of two events
 * comes: nothing of it is applied, its checkpoint does not move. After `recover`, the runner's next try applies
 * it by itself; answers the rows then.
 */
async function failThenRecover(options: {
  padding?: number;
  fail: (db: Database.Database) => void;
  recover: (db: Database.Database) => void;
}) {
  const dir = tempDir();
  const store = new SqliteEventStore(join(dir, 'events.sqlite'));
  const db = openReadModelDb(dir);
  // Running: the wait below times out in real time; the runner's second subscription is moved on to.
  const clock = new TestClock({ running: true });
  const runner = new ProjectionRunner(
    store,
    db,
    [new BufferedCountingProjection(db, options.padding)],
    log,
    300,
    clock,
  );
  await runner.start();
  const tick = { type: 'Tick', data: {} };
  await runner.waitFor((await store.append('s-a', [tick])).position);
  options.fail(db);
  await store.append('s-a', [tick]);
  const last = await store.append('s-b', [tick]);
  await expect(runner.waitFor(last.position)).rejects.toThrow(/did not reach/);
  expect(dump(db, 'buffered_counts')).toEqual([{ stream: 's-a', n: 1 }]);
  expect(db.prepare('SELECT position FROM projection_checkpoints').pluck().get()).toBeLessThan(last.position);
  options.recover(db);
  // The runner subscribes again a second after the failure.
  await clock.advance(1_000);
  await eventually(() => runner.position === last.position, 'the runner at the last event', 5_000);
  const rows = dump(db, 'buffered_counts');
  await runner.stop();
  db.close();
  await store.close();
  return rows;
}

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
    const boom = await store.append('s-boom', [
      { type: 'Boom', data: {} },
      { type: 'Tick', data: {} },
    ]);
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

  it('rows held for a batch are written once at its end; a batch that fails drops them and is applied event by event', async () => {
    const dir = tempDir();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    const db = openReadModelDb(dir);
    const plain = new CountingProjection();
    const runner = new ProjectionRunner(store, db, [plain, new BufferedCountingProjection(db)], log);
    await runner.start();
    await runner.stop();
    // One batch: three ticks, a handler bug, one more tick, on one stream; another stream of ticks.
    await store.append('s-a', [
      { type: 'Tick', data: {} },
      { type: 'Tick', data: {} },
      { type: 'Tick', data: {} },
      { type: 'Boom', data: {} },
      { type: 'Tick', data: {} },
    ]);
    const last = await store.append('s-b', [
      { type: 'Tick', data: {} },
      { type: 'Tick', data: {} },
    ]);
    await runner.start();
    await runner.waitFor(last.position);
    // The failing event is skipped in both; nothing the first, rolled-back try held is written twice.
    const expected = [
      { stream: 's-a', n: 4 },
      { stream: 's-b', n: 2 },
    ];
    expect(dump(db, 'counts')).toEqual(expected);
    expect(dump(db, 'buffered_counts')).toEqual(expected);
    // Later batches update the stored rows.
    const more = await store.append('s-a', [{ type: 'Tick', data: {} }]);
    await runner.waitFor(more.position);
    expect(dump(db, 'buffered_counts')).toEqual([
      { stream: 's-a', n: 5 },
      { stream: 's-b', n: 2 },
    ]);
    // A rebuild drops the deferred index, gives the same rows, and builds the index again.
    await runner.rebuild();
    await runner.stop();
    expect(dump(db, 'buffered_counts')).toEqual([
      { stream: 's-a', n: 5 },
      { stream: 's-b', n: 2 },
    ]);
    expect(
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'buffered_counts_by_n'").get(),
    ).toBeDefined();
    db.close();
    await store.close();
  });

  it('a rebuild commits many pages at once; one that fails is applied again page by page, skipping only the failing event', async () => {
    const dir = tempDir();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    // More than one page of the runner's catch-up (2,000 events), a handler bug in the second.
    await store.append('s-a', ticks(2_500));
    await store.append('s-b', [{ type: 'Boom', data: {} }]);
    await store.append('s-a', ticks(1_500));
    const db = openReadModelDb(dir);
    const plain = new CountingProjection();
    const runner = new ProjectionRunner(store, db, [plain, new BufferedCountingProjection(db)], log);
    const rebuilt = await runner.rebuild();
    await runner.stop();
    expect(rebuilt.events).toBe(4_001);
    // The failing event (the only one of s-b) left nothing behind.
    const expected = [{ stream: 's-a', n: 4_000 }];
    expect(dump(db, 'counts')).toEqual(expected);
    expect(dump(db, 'buffered_counts')).toEqual(expected);
    expect(db.prepare('SELECT name, position FROM projection_checkpoints ORDER BY name').all()).toEqual([
      { name: 'buffered-counts', position: 4_001 },
      { name: 'counts', position: 4_001 },
    ]);
    db.close();
    await store.close();
  });

  it('a rebuild applies each page as it is read, in one transaction over many pages, its store named by the first event', async () => {
    const dir = tempDir();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    await store.append('s-a', ticks(4_500));
    const readAll = store.readAll.bind(store);
    let pagesRead = 0;
    vi.spyOn(store, 'readAll').mockImplementation((options) => {
      pagesRead++;
      return readAll(options);
    });
    const db = openReadModelDb(dir);
    const readWhenApplied: number[] = [];
    const plain = new CountingProjection();
    const watching = watchingTicks((event) => void (event.position % 2_000 === 1 && readWhenApplied.push(pagesRead)));
    const runner = new ProjectionRunner(store, db, [plain, watching], log);
    await runner.rebuild();
    await runner.stop();
    // The first event of each page (2,000 events) was applied before the next page was read.
    expect(readWhenApplied).toEqual([1, 2, 3]);
    const [first] = await readAll({ maxCount: 1 });
    expect(db.prepare('SELECT name, position, store FROM projection_checkpoints ORDER BY name').all()).toEqual([
      { name: 'counts', position: 4_500, store: `sqlite:${first.id}` },
      { name: 'watching', position: 4_500, store: `sqlite:${first.id}` },
    ]);
    // Started again on the same log, the read models are kept (not rebuilt for another store).
    const again = new CountingProjection();
    const restarted = new ProjectionRunner(store, db, [again, watching], log);
    await restarted.start();
    await restarted.stop();
    expect(again.applied).toBe(0);
    expect(dump(db, 'counts')).toEqual([{ stream: 's-a', n: 4_500 }]);
    db.close();
    await store.close();
  });

  it('a rebuild whose log cannot be read fails, whether before any page or after some, with nothing half applied', async () => {
    const dir = tempDir();
    const store = new SqliteEventStore(join(dir, 'events.sqlite'));
    await store.append('s-a', ticks(4_500));
    const db = openReadModelDb(dir);
    const readAll = store.readAll.bind(store);
    for (const failingRead of [1, 3]) {
      let reads = 0;
      const spy = vi.spyOn(store, 'readAll').mockImplementation((options) => {
        reads++;
        return reads >= failingRead ? Promise.reject(new StoreUnavailableError('store down')) : readAll(options);
      });
      const runner = new ProjectionRunner(store, db, [new CountingProjection()], log);
      await expect(runner.rebuild()).rejects.toThrow('store down');
      expect(db.inTransaction).toBe(false);
      // What was applied before the failure was rolled back with its transaction.
      expect(dump(db, 'counts')).toEqual([]);
      spy.mockRestore();
    }
    db.close();
    await store.close();
  });

  it.each(['sqlite', 'eventstoredb (test server)'])(
    'a start catches read models up from position 0 in transactions of many pages, their deferred indexes made at the end (%s)',
    async (kind) => {
      const dir = tempDir();
      const server = kind === 'sqlite' ? undefined : await startEsdbTestServer();
      const store: EventStore = server
        ? await openEventStoreDbStore(server.url)
        : new SqliteEventStore(join(dir, 'events.sqlite'));
      await store.append('s-a', ticks(30));
      await store.append('s-b', [{ type: 'Boom', data: {} }]);
      const db = openReadModelDb(dir);
      // What another connection sees while the runner applies: its commits, and whether the deferred index is there.
      const other = new Database(join(dir, 'read-models.sqlite'), { readonly: true });
      const seen: Array<{ position: number; committed: number; indexed: boolean }> = [];
      const indexed = () =>
        db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'buffered_counts_by_n'").get() !== undefined;
      const watching = watchingTicks(
        (event) =>
          void seen.push({
            position: event.position,
            committed:
              (other
                .prepare("SELECT position FROM projection_checkpoints WHERE name = 'buffered-counts'")
                .pluck()
                .get() as number | undefined) ?? 0,
            indexed: indexed(),
          }),
      );
      const runner = (bulkEvents = 10) =>
        new ProjectionRunner(
          store,
          db,
          [new BufferedCountingProjection(db), watching],
          log,
          undefined,
          undefined,
          bulkEvents,
        );
      const first = runner();
      await first.start();
      await first.stop();
      // Ten events a transaction (the checkpoint another connection sees moves after every tenth), the index dropped for
      // them; the handler bug (event 31) skipped alone.
      const positions = seen.map((s) => s.position);
      expect(seen.map((s) => s.committed)).toEqual([
        ...Array(10).fill(0),
        ...Array(10).fill(positions[9]),
        ...Array(10).fill(positions[19]),
      ]);
      expect(seen.every((s) => !s.indexed)).toBe(true);
      expect(indexed()).toBe(true);
      expect(dump(db, 'buffered_counts')).toEqual([{ stream: 's-a', n: 30 }]);
      expect(db.pragma('cache_size', { simple: true })).toBe(-16_384);
      // Started again with read models already caught up: a few new events, applied as any catch-up's, indexes kept.
      seen.length = 0;
      await store.append('s-a', ticks(3));
      const again = runner();
      await again.start();
      await again.stop();
      expect(seen.map((s) => s.indexed)).toEqual([true, true, true]);
      expect(dump(db, 'buffered_counts')).toEqual([{ stream: 's-a', n: 33 }]);
      // Read models new to a log shorter than a bulk transaction: caught up in one transaction, no index dropped.
      seen.length = 0;
      db.exec('DELETE FROM projection_checkpoints');
      const short = runner(100);
      await short.start();
      await short.stop();
      // (Applied twice: the handler bug fails the first try of the one transaction, then each event goes alone.)
      expect(seen.every((s) => s.indexed && s.committed === 0)).toBe(true);
      expect(dump(db, 'buffered_counts')).toEqual([{ stream: 's-a', n: 33 }]);
      other.close();
      db.close();
      await store.close();
      await server?.stop();
    },
  );

  it('a batch the disk cannot take is applied again later, whole: no event skipped, nothing kept from the failed try', async () => {
    const rows = await failThenRecover({
      padding: 64 * 1024,
      // The read-model file may not grow any more: the next batch fails with SQLITE_FULL.
      fail: (db) => void db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`),
      recover: (db) => void db.pragma('max_page_count = 1073741823'),
    });
    expect(rows).toEqual([
      { stream: 's-a', n: 2 },
      { stream: 's-b', n: 1 },
    ]);
  });

  it('a batch whose checkpoint cannot be written is applied again later from the log, not from rows held in memory', async () => {
    const rows = await failThenRecover({
      // Every write of a checkpoint fails (as a COMMIT would on a failing disk): the batch's rows are written,
      // then rolled back with it, on the first try and on the event-by-event one.
      fail: (db) =>
        db.exec(`CREATE TABLE failing (on_ INTEGER); INSERT INTO failing VALUES (1);
          CREATE TRIGGER failing_checkpoints BEFORE UPDATE ON projection_checkpoints WHEN (SELECT on_ FROM failing)
          BEGIN SELECT RAISE(ABORT, 'checkpoint write failed'); END`),
      recover: (db) => db.exec('UPDATE failing SET on_ = 0'),
    });
    expect(rows).toEqual([
      { stream: 's-a', n: 2 },
      { stream: 's-b', n: 1 },
    ]);
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
    const registry = new DeviceRegistry(
      createDeviceCommands(store),
      runner,
      (id) => devices.get(id)?.session,
      'sandbox',
    );
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

  describe('checkpoints belong to the store they came from (issue 13, defect 5)', () => {
    const tick = (store: EventStore, stream: string, n: number) =>
      store.append(
        stream,
        Array.from({ length: n }, () => ({ type: 'Tick', data: {} })),
      );
    /** Runs a counting read model in `dir` on `store` until it has caught up; answers what it holds and applied. */
    async function feed(dir: string, store: EventStore) {
      const db = openReadModelDb(dir);
      const counts = new CountingProjection();
      const runner = new ProjectionRunner(store, db, [counts], log);
      await runner.start();
      const rows = dump(db, 'counts');
      await runner.stop();
      db.close();
      return { rows, applied: counts.applied };
    }

    it('rebuilds a read model fed by another SQLite store, and keeps one fed by this store', async () => {
      const dir = tempDir();
      const a = new SqliteEventStore(join(tempDir(), 'events.sqlite'));
      await tick(a, 'a-1', 3);
      await tick(a, 'a-2', 2);
      expect((await feed(dir, a)).rows).toEqual([
        { stream: 'a-1', n: 3 },
        { stream: 'a-2', n: 2 },
      ]);
      expect((await feed(dir, a)).applied).toBe(0);
      // Another store: its positions are lower than the checkpoint, and would all be skipped.
      const b = new SqliteEventStore(join(tempDir(), 'events.sqlite'));
      await tick(b, 'b-1', 2);
      expect((await feed(dir, b)).rows).toEqual([{ stream: 'b-1', n: 2 }]);
      expect((await feed(dir, b)).applied).toBe(0);
      await a.close();
      await b.close();
    });

    it('rebuilds when the same read models meet an EventStoreDB store', async () => {
      const server = await startEsdbTestServer();
      const dir = tempDir();
      const sqlite = new SqliteEventStore(join(tempDir(), 'events.sqlite'));
      const esdb = await openEventStoreDbStore(server.url);
      try {
        await tick(sqlite, 'lite', 2);
        await tick(esdb, 'esdb', 1);
        expect((await feed(dir, sqlite)).rows).toEqual([{ stream: 'lite', n: 2 }]);
        expect((await feed(dir, esdb)).rows).toEqual([{ stream: 'esdb', n: 1 }]);
        expect((await feed(dir, esdb)).applied).toBe(0);
      } finally {
        await esdb.close();
        await sqlite.close();
        await server.stop();
      }
    });

    it('names the store by its first event when the read models started on an empty store', async () => {
      const dir = tempDir();
      const store = new SqliteEventStore(join(tempDir(), 'events.sqlite'));
      expect((await feed(dir, store)).rows).toEqual([]);
      const db = openReadModelDb(dir);
      const counts = new CountingProjection();
      const runner = new ProjectionRunner(store, db, [counts], log);
      await runner.start();
      await runner.waitFor((await tick(store, 's', 2)).position);
      await runner.stop();
      db.close();
      expect(await feed(dir, store)).toEqual({ rows: [{ stream: 's', n: 2 }], applied: 0 });
      await store.close();
    });

    it('rebuilds read models ahead of an event store restored from a backup, or holding other events at their checkpoint', async () => {
      const dir = tempDir();
      const storeDir = tempDir();
      const file = join(storeDir, 'events.sqlite');
      let store = new SqliteEventStore(file);
      await tick(store, 'before', 1);
      await store.close();
      copyFileSync(file, join(storeDir, 'backup.sqlite'));
      store = new SqliteEventStore(file);
      await tick(store, 'lost', 3);
      expect((await feed(dir, store)).rows).toEqual([
        { stream: 'before', n: 1 },
        { stream: 'lost', n: 3 },
      ]);
      await store.close();
      const restore = () => {
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
        copyFileSync(join(storeDir, 'backup.sqlite'), file);
        return new SqliteEventStore(file);
      };

      // The log ends before the checkpoint: kept, the read model served what the log no longer has, and
      // skipped the new events at the positions it had passed.
      store = restore();
      expect((await feed(dir, store)).rows).toEqual([{ stream: 'before', n: 1 }]);
      await tick(store, 'after', 1);
      expect((await feed(dir, store)).rows).toEqual([
        { stream: 'after', n: 1 },
        { stream: 'before', n: 1 },
      ]);
      await store.close();

      // The restored log grew past the checkpoint before the read models met it: other events at its position.
      copyFileSync(join(storeDir, 'backup.sqlite'), join(storeDir, 'older.sqlite'));
      store = restore();
      await tick(store, 'other', 3);
      expect((await feed(dir, store)).rows).toEqual([
        { stream: 'before', n: 1 },
        { stream: 'other', n: 3 },
      ]);
      expect((await feed(dir, store)).applied).toBe(0);
      await store.close();
    });

    it('migrates a read-model file whose checkpoints do not name their store, and rebuilds it once', async () => {
      const dir = tempDir();
      const store = new SqliteEventStore(join(tempDir(), 'events.sqlite'));
      await tick(store, 's', 3);
      // The file as the runner wrote it before stores were recorded, with a stale read model in it.
      const old = openReadModelDb(dir);
      old.exec(`CREATE TABLE projection_checkpoints (name TEXT PRIMARY KEY, version INTEGER NOT NULL, position INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO projection_checkpoints VALUES ('counts', 1, 3);
        CREATE TABLE counts (stream TEXT PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counts VALUES ('elsewhere', 7);`);
      old.close();
      expect((await feed(dir, store)).rows).toEqual([{ stream: 's', n: 3 }]);
      const migrated = new Database(join(dir, 'read-models.sqlite'));
      expect(migrated.prepare('SELECT name, position, store FROM projection_checkpoints').all()).toEqual([
        { name: 'counts', position: 3, store: `sqlite:${(await store.readAll({ maxCount: 1 }))[0].id}` },
      ]);
      migrated.close();
      expect((await feed(dir, store)).applied).toBe(0);
      await store.close();
    });
  });
});
