/**
 * Given / then for read models: given these events in the log, then a query answers this. The read model is
 * made on a fresh read-model file in a temporary directory (openReadModelDb, as the gateway makes it) and fed
 * as ProjectionRunner feeds it: set up and reset (a new file), caught up with an empty log, then each
 * `given` one batch in one transaction, the events it handles applied in position order and then flushed.
 *
 * Every `then` also asks a second read model, rebuilt from position 0 on a file of its own with every event in
 * one batch (as `npm run rebuild` feeds it, its deferred indexes dropped until the end): an answer must not
 * depend on how the log was cut into batches, nor on what a read model kept in memory between them.
 */
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { expect, onTestFinished } from 'vitest';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import { backgroundCheckpoints } from '../../src/eventstore/sqlite/background-checkpoints.js';
import type { TypedEvent } from '../../src/eventstore/typed-events.js';
import type { Projection } from '../../src/projections/projection.js';
import { READ_MODEL_FILE, openReadModelDb } from '../../src/projections/read-model-db.js';
import { tempDir } from './temp-dir.js';

/** An event of the log, and where it is stored when that matters to the read model (else stream `spec`). */
export type GivenEvent<Event extends TypedEvent> = Event & {
  streamId?: string;
  /** When the store recorded it; by default one second after the event before it. */
  createdAt?: Date;
  metadata?: Record<string, unknown>;
};

/** The first event's createdAt when none is given. */
const LOG_START = Date.parse('2026-01-01T00:00:00.000Z');

export interface ReadModelSpecificationChain<Event extends TypedEvent, Model extends Projection> {
  /** Another batch, committed after those before. */
  given(...events: Array<GivenEvent<Event>>): ReadModelSpecificationChain<Event, Model>;
  /**
   * Another batch that the runner applies, sees roll back (the disk failed at its checkpoint) and applies again:
   * what the read model held in memory for the failed attempt must be gone (Projection.discard).
   */
  givenRetried(...events: Array<GivenEvent<Event>>): ReadModelSpecificationChain<Event, Model>;
  /** What `query` answers, fed batch by batch and rebuilt in one batch alike (asymmetric matchers welcome). */
  then<Answer>(query: (model: Model) => Answer, expected: Answer): ReadModelSpecificationChain<Event, Model>;
}

interface Fed<Model> {
  db: Database.Database;
  model: Model;
}

class RolledBack extends Error {}

const NOT_A_PROMISE =
  'a read-model specification was awaited (or returned from a test): write the test with a block body, and never await a chain';

/** `make`: the read model on a database, as src/read-models.ts makes it. */
export function readModelSpecification<Event extends TypedEvent, Model extends Projection>(
  make: (db: Database.Database) => Model,
) {
  return {
    given(...events: Array<GivenEvent<Event>>): ReadModelSpecificationChain<Event, Model> {
      return chain(make).given(...events);
    },
  };
}

function chain<Event extends TypedEvent, Model extends Projection>(
  make: (db: Database.Database) => Model,
): ReadModelSpecificationChain<Event, Model> {
  const live = freshReadModel(make);
  // As the runner's start() on a new file: no checkpoint, so reset; an empty log, so caught up at once.
  live.model.caughtUp?.();
  const log: StoredEvent[] = [];
  const revisions = new Map<string, number>();
  let rebuilt: { events: number; fed: Fed<Model> } | undefined;

  const stored = (events: ReadonlyArray<GivenEvent<Event>>): StoredEvent[] =>
    events.map(({ type, data, streamId = 'spec', createdAt, metadata = {} }) => {
      const position = log.length + 1;
      const revision = (revisions.get(streamId) ?? -1) + 1;
      revisions.set(streamId, revision);
      const event: StoredEvent = {
        id: `event-${position}`,
        streamId,
        revision,
        position,
        type,
        data,
        metadata,
        createdAt: createdAt ?? new Date(LOG_START + position * 1_000),
      };
      log.push(event);
      return event;
    });

  const self: ReadModelSpecificationChain<Event, Model> = {
    given(...events) {
      applyBatch(live, stored(events));
      return self;
    },
    givenRetried(...events) {
      const batch = stored(events);
      try {
        live.db.transaction(() => {
          applyEvents(live, batch);
          throw new RolledBack('the checkpoint could not be written');
        })();
      } catch (error) {
        if (!(error instanceof RolledBack)) throw error;
        live.model.discard?.();
      }
      applyBatch(live, batch);
      return self;
    },
    then(query, expected) {
      // A chain has `then`, so a test that returns one is awaited as a promise: say so instead of failing oddly.
      if (typeof expected === 'function') throw new TypeError(NOT_A_PROMISE);
      expect(query(live.model), 'fed batch by batch').toEqual(expected);
      if (rebuilt?.events !== log.length) rebuilt = { events: log.length, fed: rebuild(make, log) };
      expect(query(rebuilt.fed.model), 'rebuilt from position 0 in one batch').toEqual(expected);
      return self;
    },
  };
  return self;
}

/** A read model on a new read-model file (closed when the test ends, before its directory goes). */
function freshReadModel<Model extends Projection>(make: (db: Database.Database) => Model): Fed<Model> {
  const dir = tempDir('dmg-read-model-');
  const db = openReadModelDb(dir);
  onTestFinished(async () => {
    db.close();
    // The checkpoint thread drops its own connection to the file later, deleting the WAL as it does: a
    // registration of ours, answered in order, returns once it has (else the directory's removal may race it).
    await backgroundCheckpoints.add(join(dir, READ_MODEL_FILE)).release();
  });
  const model = make(db);
  db.transaction(() => {
    model.setup(db);
    model.reset(db);
  })();
  return { db, model };
}

/** The events the read model handles, in position order, then what it held written (the runner's applyEvents). */
function applyEvents(fed: Fed<Projection>, events: readonly StoredEvent[]): void {
  const { db, model } = fed;
  for (const event of events) if (model.handles === 'all' || model.handles.has(event.type)) model.apply(event, db);
  model.flush?.(db);
}

function applyBatch(fed: Fed<Projection>, events: readonly StoredEvent[]): void {
  fed.db.transaction(() => applyEvents(fed, events))();
}

/** As ProjectionRunner.rebuild(): deferred indexes dropped, every event in one transaction, indexes made again. */
function rebuild<Model extends Projection>(
  make: (db: Database.Database) => Model,
  log: readonly StoredEvent[],
): Fed<Model> {
  const fed = freshReadModel(make);
  const { db, model } = fed;
  const sqlOf = db.prepare<[string], { sql: string }>(
    "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?",
  );
  const deferred = (model.deferredIndexes ?? []).flatMap((name) => {
    const row = sqlOf.get(name);
    if (row) db.exec(`DROP INDEX ${name}`);
    return row ? [row.sql] : [];
  });
  if (log.length > 0) applyBatch(fed, log);
  db.transaction(() => deferred.forEach((sql) => db.exec(sql)))();
  model.caughtUp?.();
  return fed;
}
