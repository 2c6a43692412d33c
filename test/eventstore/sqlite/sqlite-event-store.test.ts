import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  IdempotencyViolationError,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '../../../src/eventstore/event-store.js';
import { SqliteEventStore } from '../../../src/eventstore/sqlite/sqlite-event-store.js';
import { eventStoreConformance } from '../support/conformance.js';
import { tempDir } from '../../support/temp-dir.js';

const freshFile = () => join(tempDir('dmg-store-'), 'events.sqlite');

eventStoreConformance('sqlite', {
  open: async () => new SqliteEventStore(freshFile()),
});

describe('sqlite event store schema', () => {
  it('migrates a file whose event ids were unique across streams, keeping every event and position', async () => {
    const file = freshFile();
    // The tables as the first release created them (event ids unique over the whole log).
    const old = new Database(file);
    old.exec(`CREATE TABLE events (
        position INTEGER PRIMARY KEY AUTOINCREMENT, stream_id TEXT NOT NULL, revision INTEGER NOT NULL,
        event_id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT, created_at INTEGER NOT NULL,
        UNIQUE (stream_id, revision));
      CREATE TABLE streams (stream_id TEXT PRIMARY KEY, revision INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE snapshots (stream_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, state TEXT NOT NULL, saved_at INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO events VALUES (1, 'a', 0, '00000000-0000-4000-8000-000000000001', 'A', '{"n":1}', NULL, 1000);
      INSERT INTO events VALUES (2, 'b', 0, '00000000-0000-4000-8000-000000000002', 'B', '{"n":2}', '{"m":1}', 2000);
      INSERT INTO events VALUES (3, 'a', 1, '00000000-0000-4000-8000-000000000003', 'A', '{"n":3}', NULL, 3000);
      INSERT INTO streams VALUES ('a', 1), ('b', 0);`);
    old.close();

    const store = new SqliteEventStore(file);
    const all = await store.readAll();
    expect(all.map((e) => [e.position, e.streamId, e.revision, e.id, e.data])).toEqual([
      [1, 'a', 0, '00000000-0000-4000-8000-000000000001', { n: 1 }],
      [2, 'b', 0, '00000000-0000-4000-8000-000000000002', { n: 2 }],
      [3, 'a', 1, '00000000-0000-4000-8000-000000000003', { n: 3 }],
    ]);
    expect(all[1].metadata).toEqual({ m: 1 });
    // The id of stream a's first event, now used in stream b: another event, after the old ones.
    const reused = await store.append('b', [{ id: '00000000-0000-4000-8000-000000000001', type: 'B', data: {} }], {
      expectedRevision: 0,
    });
    expect(reused).toEqual({ nextExpectedRevision: 1, position: 4 });
    // A repeat within the stream is still recognised.
    expect(await store.append('a', [{ id: '00000000-0000-4000-8000-000000000003', type: 'A', data: {} }])).toEqual({
      nextExpectedRevision: 1,
      position: 3,
    });
    expect(store.integrityCheck()).toBe('ok');
    await store.close();

    // Opening the migrated file again changes nothing.
    const again = new SqliteEventStore(file);
    expect((await again.readAll()).map((e) => e.position)).toEqual([1, 2, 3, 4]);
    await again.close();
  });

  it('migrates a file whose event ids were unique per stream by a constraint to the plain id index', async () => {
    const file = freshFile();
    const old = new Database(file);
    old.exec(`CREATE TABLE events (
        position INTEGER PRIMARY KEY AUTOINCREMENT, stream_id TEXT NOT NULL, revision INTEGER NOT NULL,
        event_id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT, created_at INTEGER NOT NULL,
        UNIQUE (stream_id, revision), UNIQUE (stream_id, event_id));
      CREATE TABLE streams (stream_id TEXT PRIMARY KEY, revision INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE snapshots (stream_id TEXT PRIMARY KEY, revision INTEGER NOT NULL, state TEXT NOT NULL, saved_at INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO events VALUES (1, 'a', 0, '00000000-0000-4000-8000-000000000001', 'A', '{}', NULL, 1000);
      INSERT INTO events VALUES (7, 'b', 0, '00000000-0000-4000-8000-000000000001', 'B', '{}', NULL, 2000);
      INSERT INTO streams VALUES ('a', 0), ('b', 0);
      PRAGMA user_version = 1;`);
    old.close();

    const store = new SqliteEventStore(file);
    expect((await store.readAll()).map((e) => [e.position, e.streamId])).toEqual([
      [1, 'a'],
      [7, 'b'],
    ]);
    expect(await store.append('a', [{ id: '00000000-0000-4000-8000-000000000001', type: 'A', data: {} }])).toEqual({
      nextExpectedRevision: 0,
      position: 1,
    });
    expect(await store.append('a', [{ type: 'A', data: {} }])).toEqual({ nextExpectedRevision: 1, position: 8 });
    await store.close();

    const db = new Database(file, { readonly: true });
    const uniqueIndexes = db.prepare(`SELECT name FROM pragma_index_list('events') WHERE "unique" = 1`).all() as Array<{
      name: string;
    }>;
    const idColumns = uniqueIndexes.flatMap(({ name }) =>
      (db.prepare('SELECT name FROM pragma_index_info(?)').all(name) as Array<{ name: string }>).map((c) => c.name),
    );
    expect(idColumns).not.toContain('event_id');
    expect(db.pragma('user_version', { simple: true })).toBe(2);
    db.close();
  });

  it('refuses an append that gives an id its stream already holds, or the same id twice, and keeps nothing of it', async () => {
    const store = new SqliteEventStore(freshFile());
    const used = '00000000-0000-4000-8000-00000000000a';
    await store.append('s', [{ id: used, type: 'A', data: {} }]);
    await expect(
      store.append('s', [
        { type: 'B', data: {} },
        { id: used, type: 'A', data: {} },
      ]),
    ).rejects.toBeInstanceOf(IdempotencyViolationError);
    const twice = '00000000-0000-4000-8000-00000000000b';
    await expect(
      store.append('s', [
        { id: twice, type: 'B', data: {} },
        { id: twice, type: 'B', data: {} },
      ]),
    ).rejects.toBeInstanceOf(IdempotencyViolationError);
    // The same id in another stream is another event.
    expect(
      (
        await store.append('t', [
          { type: 'B', data: {} },
          { id: used, type: 'A', data: {} },
        ])
      ).nextExpectedRevision,
    ).toBe(1);
    expect((await store.readStream('s')).map((e) => e.type)).toEqual(['A']);
    await store.close();
  });
});

describe('sqlite event store: deciding again inside the append (issue 14)', () => {
  const ev = (type: string, data: unknown = {}) => ({ type, data });

  it('hands onConflict the events after the expected revision and appends what it answers after them', async () => {
    const store = new SqliteEventStore(freshFile());
    await store.append('s', [ev('A'), ev('B')]);
    const seen: string[] = [];
    const result = await store.append('s', [ev('mine-on-A')], {
      expectedRevision: 0,
      onConflict: (newer) => {
        seen.push(...newer.map((e) => `${e.revision}:${e.type}`));
        return [ev('mine-on-B'), ev('second')];
      },
    });
    expect(seen).toEqual(['1:B']);
    expect(result.nextExpectedRevision).toBe(3);
    expect((await store.readStream('s')).map((e) => e.type)).toEqual(['A', 'B', 'mine-on-B', 'second']);
    await store.close();
  });

  it('appends nothing when onConflict answers [], and answers the last event; refuses as before when it answers undefined', async () => {
    const store = new SqliteEventStore(freshFile());
    const first = await store.append('s', [ev('A')]);
    const unchanged = await store.append('s', [ev('X')], { expectedRevision: 'no_stream', onConflict: () => [] });
    expect(unchanged).toEqual(first);
    await expect(
      store.append('s', [ev('X')], { expectedRevision: 'no_stream', onConflict: () => undefined }),
    ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    expect((await store.readStream('s')).map((e) => e.type)).toEqual(['A']);
    await store.close();
  });

  it('fails only the append whose onConflict throws, not the appends committed beside it', async () => {
    const store = new SqliteEventStore(freshFile());
    await store.append('s', [ev('A')]);
    const refused = new Error('refused on the new state');
    const [failed, other] = await Promise.allSettled([
      store.append('s', [ev('X')], {
        expectedRevision: 'no_stream',
        onConflict: () => {
          throw refused;
        },
      }),
      store.append('t', [ev('T')]),
    ]);
    expect(failed).toEqual({ status: 'rejected', reason: refused });
    expect(other.status).toBe('fulfilled');
    expect((await store.readStream('s')).map((e) => e.type)).toEqual(['A']);
    await store.close();
  });

  it('calls onCommitted with the result before the append answers (before the WAL is flushed)', async () => {
    const store = new SqliteEventStore(freshFile());
    const order: string[] = [];
    const appended = store.append('s', [ev('A')], {
      onCommitted: (result) => order.push(`committed ${result.nextExpectedRevision}`),
    });
    void appended.then(() => order.push('answered'));
    await appended;
    expect(order).toEqual(['committed 0', 'answered']);
    await store
      .append('s', [ev('B')], { expectedRevision: 5, onCommitted: () => order.push('not committed') })
      .catch(() => undefined);
    expect(order).toEqual(['committed 0', 'answered']);
    await store.close();
  });

  it('refuses writes from the moment close() begins, and commits those submitted before it', async () => {
    const file = freshFile();
    const store = new SqliteEventStore(file);
    const before = store.append('s', [ev('A')]);
    const closing = store.close();
    // Submitted while the close drains: refused, not committed under the closing connection.
    await expect(store.append('s', [ev('B')])).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.saveSnapshot('s', { revision: 0, state: {} })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(store.close()).toBe(closing);
    await expect(before).resolves.toMatchObject({ nextExpectedRevision: 0 });
    await closing;
    const reopened = new SqliteEventStore(file);
    expect((await reopened.readStream('s')).map((e) => e.type)).toEqual(['A']);
    await reopened.close();
  });
});
