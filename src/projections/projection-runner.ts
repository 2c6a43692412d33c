import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import {
  type EventStore,
  type StoredEvent,
  StoreUnavailableError,
  type Subscription,
} from '../eventstore/event-store.js';
import { forEachBatch } from '../eventstore/for-each-batch.js';
import { isStorageFailure } from '../storage/storage-health.js';
import { type Clock, type ClockTimer, systemClock } from '../time/clock.js';
import { beginBulkWrites } from './bulk-writes.js';
import type { Projection } from './projection.js';

/**
 * Events read per page while catching up. Small pages die young (a scavenge frees them); pages of 50,000
 * outlived the young generation and were copied and marked again by the full collector.
 */
const CATCH_UP_PAGE = 2_000;
/**
 * A rebuild writes the rows buffered by the read models (src/projections/row-buffer.ts) about this many events at a
 * time, and in place commits with them: a read-model page rewritten by many batches is written once per commit.
 * Smaller commits made rebuilds slower, larger ones no faster (docs/notes/performance.md). A rebuild into a fresh
 * file (read-model-file-rebuild.ts) commits once, at the end.
 */
const REBUILD_COMMIT_EVENTS = 100_000;
/**
 * A read model's checkpoint is written with a batch it took events from, and otherwise once it lags this many
 * events behind the runner: a batch none of a runner's read models takes (the webhooks runner and most sends)
 * opens no transaction, and a batch writes the checkpoints of the read models it changed, not of all of them
 * (issue 30: each commit rewrites its pages into the WAL). A restart re-reads at most this many events that a
 * read model does not take.
 */
export const CHECKPOINT_LAG_EVENTS = 1_000;
/**
 * Events applied per transaction while a start catches read models up from position 0 (read first, then applied:
 * the connection may be shared with another runner, so no transaction stays open across a read). A page per
 * transaction, each commit rewriting the pages of every index, made such a start 2.4–2.9 times as slow as a rebuild
 * (docs/notes/performance.md).
 */
const BULK_CATCH_UP_EVENTS = 50_000;

export class ProjectionLagError extends Error {
  override readonly name = 'ProjectionLagError';
}

/** What a command needs of the read models: to wait until they include its append. */
export interface ReadModelProgress {
  /** Rejects with ProjectionLagError when the read models do not get there in time. */
  waitFor(position: number): Promise<void>;
  /**
   * For a command that has already succeeded: waits as waitFor does, but a lag is logged and answered
   * false instead of thrown, because a write that succeeded never answers an error.
   */
  settle(position: number): Promise<boolean>;
}

/**
 * What the gateway needs of its read models, whoever feeds them: this process's own runner, or, under
 * GATEWAY_PROCESSES, the machine's one projector (src/projections/projector-link.ts follows it).
 */
export interface ReadModelFeed extends ReadModelProgress {
  /** Every read model includes all events up to here. */
  readonly position: number;
  /** The read models cannot be written (the last batch failed and none has succeeded since). */
  readonly failing: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  rebuild(options?: RebuildOptions): Promise<{ events: number; seconds: number }>;
}

export interface RebuildOptions {
  /**
   * Events per transaction (REBUILD_COMMIT_EVENTS). A fresh file no one reads until it is done commits once: nothing
   * is journaled then (its pages are all new), and no page is written out twice.
   */
  commitEvents?: number;
  /** Events between writes of the rows the read models buffer, within a transaction (REBUILD_COMMIT_EVENTS). */
  flushEvents?: number;
}

interface Waiter {
  position: number;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: ClockTimer;
}

/**
 * Feeds read models from the log, checkpointed: each batch of events and the new checkpoints commit in
 * one read-model transaction, so a restart resumes exactly where the last batch ended. Commands call
 * waitFor(position) with the position of their own append before answering (read-your-writes).
 */
/**
 * Which store a checkpoint's positions belong to: the store's kind and the id of the first event of its
 * log (positions of two stores are not comparable, and a read-model file can meet another store: a
 * DATA_DIR kept while EVENTSTORE_URL changes, a restored backup). `kind:` alone while nothing was applied.
 */
const storeIdentity = (kind: string, firstEventId: string | undefined) => `${kind}:${firstEventId ?? ''}`;

/** How long a command waits for the read models to include its write before it answers without them. */
export const DEFAULT_WAIT_TIMEOUT_MS = 10_000;

export class ProjectionRunner implements ReadModelFeed {
  /** Why the subscription last failed, until a batch is applied again. */
  private lastFailure: unknown;

  /** The read models cannot be written (the last batch failed and none has succeeded since). */
  get failing(): boolean {
    return this.lastFailure !== undefined;
  }
  /** Each read model's position in memory: every event up to it applied (or not taken). */
  private readonly checkpoints = new Map<string, number>();
  /**
   * By read model, the events passed since its checkpoint row was written (CHECKPOINT_LAG_EVENTS): counted, since
   * positions are not event numbers on every store (EventStoreDB's are offsets in its log).
   */
  private readonly unsaved = new Map<string, number>();
  /** The store identity each read model's checkpoint belongs to. */
  private readonly stores = new Map<string, string>();
  private subscription: Subscription | undefined;
  private loop: Promise<void> | undefined;
  private waiters: Waiter[] = [];
  private applied = 0;
  private readonly upsertCheckpoint: Database.Statement;
  /** By event type, the projections that take it (their indexes, in order): one look-up per event, not one per projection. */
  private readonly takers = new Map<string, number[]>();
  /** The read models whose checkpoint row the transaction being committed writes. */
  private readonly written = new Set<Projection>();
  /** Every read model includes all events up to here. */
  position = 0;
  /**
   * Told of each batch once it has committed (before the waiters are released): the machine's projector tells
   * the processes that read its read models (src/cluster/machine-projector.ts).
   */
  onCommitted: ((events: readonly StoredEvent[]) => void) | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly db: Database.Database,
    private readonly projections: readonly Projection[],
    private readonly log: Logger,
    private readonly waitTimeoutMs = DEFAULT_WAIT_TIMEOUT_MS,
    private readonly clock: Clock = systemClock,
    /** Events a transaction while read models catch up from position 0 (BULK_CATCH_UP_EVENTS; tests make it small). */
    private readonly bulkEvents = BULK_CATCH_UP_EVENTS,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS projection_checkpoints (
      name TEXT PRIMARY KEY, version INTEGER NOT NULL, position INTEGER NOT NULL, store TEXT, event_id TEXT) WITHOUT ROWID`);
    // Read-model files from before checkpoints named their store, or the event they end at: the columns are
    // added, NULL (unknown).
    const columns = db
      .prepare('SELECT name FROM pragma_table_info(?)')
      .pluck()
      .all('projection_checkpoints') as string[];
    if (!columns.includes('store')) db.exec('ALTER TABLE projection_checkpoints ADD COLUMN store TEXT');
    if (!columns.includes('event_id')) db.exec('ALTER TABLE projection_checkpoints ADD COLUMN event_id TEXT');
    this.upsertCheckpoint = db.prepare(
      `INSERT INTO projection_checkpoints (name, version, position, store, event_id) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(name) DO UPDATE SET version = excluded.version, position = excluded.position, store = excluded.store, event_id = excluded.event_id`,
    );
  }

  /**
   * A read model is kept only when its checkpoint belongs to this store: the same first event, or an
   * empty store then and nothing applied since. Anything else (another store, or a checkpoint from
   * before stores were recorded) is rebuilt, since its positions mean nothing here.
   */
  private sameStore(row: { store: string | null; position: number }, current: string): boolean {
    if (row.store === current) return true;
    return row.store === storeIdentity(this.store.kind, undefined) && row.position === 0;
  }

  /** Sets up the read models, rebuilds those whose version changed, catches up, then follows live. */
  async start(): Promise<void> {
    const [first] = await this.store.readAll({ maxCount: 1 });
    const current = storeIdentity(this.store.kind, first?.id);
    const saved = new Map(
      (
        this.db.prepare('SELECT name, version, position, store, event_id FROM projection_checkpoints').all() as Array<{
          name: string;
          version: number;
          position: number;
          store: string | null;
          event_id: string | null;
        }>
      ).map((row) => [row.name, row]),
    );
    const missing = await this.checkpointsNotInLog([...saved.values()].filter((row) => this.sameStore(row, current)));
    const emptied: Projection[] = [];
    this.db.transaction(() => {
      for (const projection of this.projections) {
        projection.setup(this.db);
        const row = saved.get(projection.name);
        const sameStore = row !== undefined && this.sameStore(row, current);
        const inLog = row !== undefined && !missing.has(row.position);
        if (row && row.version === projection.version && sameStore && inLog) {
          this.checkpoints.set(projection.name, row.position);
          this.stores.set(projection.name, row.store!);
          continue;
        }
        if (row && !sameStore) {
          this.log.warn(
            { projection: projection.name, built: row.store ?? 'unknown', store: current },
            'read model was built from another event store: rebuilding',
          );
        } else if (row && !inLog) {
          this.log.warn(
            { projection: projection.name, position: row.position },
            'read model is ahead of the event store, or was built from other events at its position (a restored backup?): rebuilding',
          );
        } else if (row)
          this.log.info(
            { projection: projection.name, from: row.version, to: projection.version },
            'read model changed: rebuilding',
          );
        projection.reset(this.db);
        this.saveCheckpoint(projection, 0);
        emptied.push(projection);
      }
    })();
    this.position = Math.min(...this.projections.map((p) => this.checkpoints.get(p.name) ?? 0));
    await this.catchUp(emptied);
    this.follow();
  }

  /**
   * The checkpoint positions whose event the log does not have: past its end, or another event there. A log
   * restored from a backup (or copied before its read models) reuses positions the read models have applied:
   * kept, they would serve what the log no longer holds and skip the new events at those positions.
   */
  private async checkpointsNotInLog(
    rows: ReadonlyArray<{ position: number; event_id: string | null }>,
  ): Promise<Set<number>> {
    const missing = new Set<number>();
    const expected = new Map<number, string | null>();
    for (const row of rows)
      if (row.position > 0) expected.set(row.position, expected.get(row.position) ?? row.event_id);
    for (const [position, eventId] of expected) {
      let event: StoredEvent | undefined;
      try {
        [event] = await this.store.readAll({ from: position, maxCount: 1 });
      } catch (error) {
        // EventStoreDB refuses a position where no record starts: no event of ours is there either.
        if (error instanceof StoreUnavailableError) throw error;
      }
      // A checkpoint from before event ids were kept is only checked for an event at its position.
      if (event?.position !== position || (eventId !== null && event.id !== eventId)) missing.add(position);
    }
    return missing;
  }

  /** Resolves once every read model includes the event at `position`. */
  waitFor(position: number): Promise<void> {
    if (this.position >= position) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        // The cause says why (e.g. the read models' disk is full), so that the answer can say so too.
        reject(
          new ProjectionLagError(`read models did not reach position ${position} within ${this.waitTimeoutMs} ms`, {
            cause: this.lastFailure,
          }),
        );
      }, this.waitTimeoutMs);
      this.waiters.push({ position, resolve, reject, timer });
    });
  }

  async settle(position: number): Promise<boolean> {
    try {
      await this.waitFor(position);
      return true;
    } catch (error) {
      if (!(error instanceof ProjectionLagError)) throw error;
      this.log.warn({ position, err: error }, 'read models lag behind a write that succeeded; answering without them');
      return false;
    }
  }

  /**
   * Throws every read model away and feeds it again from position 0. The database must be this runner's alone
   * meanwhile (npm run rebuild): its transactions stay open while the log is read.
   */
  async rebuild(options: RebuildOptions = {}): Promise<{ events: number; seconds: number }> {
    await this.stop();
    const started = performance.now();
    this.db.transaction(() => {
      for (const projection of this.projections) {
        projection.setup(this.db); // a rebuild may be the first thing a runner does (npm run rebuild)
        projection.reset(this.db);
        this.saveCheckpoint(projection, 0);
      }
    })();
    this.position = 0;
    this.applied = 0;
    const endBulkWrites = beginBulkWrites(this.db, this.projections);
    try {
      await this.rebuildPass(
        options.commitEvents ?? REBUILD_COMMIT_EVENTS,
        options.flushEvents ?? REBUILD_COMMIT_EVENTS,
      );
    } finally {
      endBulkWrites();
    }
    const result = { events: this.applied, seconds: (performance.now() - started) / 1000 };
    this.follow();
    return result;
  }

  async stop(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.close();
    await this.loop;
    this.loop = undefined;
  }

  /**
   * Reads directly until the end of the log, so start() returns caught up; each page in a transaction of its own.
   * While read models just `emptied` (reset at this start) with indexes to defer take events, up to `bulkEvents`
   * events a transaction, and once a whole such transaction's worth was read (a long log, not a few events), with
   * bulk writes (bulk-writes.ts). Only those gain: without their indexes dropped, larger transactions were no faster,
   * and holding 50,000 events costs the collector (docs/notes/performance.md).
   */
  private async catchUp(emptied: readonly Projection[]): Promise<void> {
    const bulky = emptied.some((projection) => (projection.deferredIndexes?.length ?? 0) > 0);
    const count = bulky ? this.bulkEvents : CATCH_UP_PAGE;
    let endBulkWrites: (() => void) | undefined;
    try {
      for (;;) {
        const events = await this.readAfter(this.position, count);
        if (events.length === 0) break;
        if (bulky && events.length === this.bulkEvents && !endBulkWrites) {
          // A start that takes a while on a long log: said, so that it is not taken for a hang.
          this.log.info({ readModels: emptied.map((p) => p.name) }, 'building read models from the log before serving');
          endBulkWrites = beginBulkWrites(this.db, emptied);
        }
        this.applyBatch(events);
      }
    } finally {
      endBulkWrites?.();
    }
    if (endBulkWrites) this.log.info({ position: this.position }, 'read models built from the log');
    for (const projection of this.projections) projection.caughtUp?.();
  }

  /** Up to `count` events after `after`, read a page at a time. */
  private async readAfter(after: number, count: number): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    for (let from = after; events.length < count;) {
      const page = await this.store.readAll({ after: from, maxCount: Math.min(CATCH_UP_PAGE, count - events.length) });
      if (page.length === 0) break;
      for (const event of page) events.push(event);
      from = page[page.length - 1].position;
    }
    return events;
  }

  /**
   * A rebuild's pass over the log: each page is applied as soon as it is read, in transactions of about
   * `commitEvents` events that stay open across the reads (rebuild() has the read-model database to itself), so a
   * page's events are garbage young instead of waiting, a hundred thousand at a time, to be applied; the rows the
   * read models buffer are written every `flushEvents` within it. Should a transaction fail, it rolls back and
   * its pages are read and applied again one at a time, where a failing event is found and skipped.
   */
  private async rebuildPass(commitEvents: number, flushEvents: number): Promise<void> {
    const apply = (projection: Projection, event: StoredEvent) => projection.apply(event, this.db);
    for (;;) {
      const from = this.position;
      let first: StoredEvent | undefined;
      let read = from;
      let applied = 0;
      // Only a listener needs the events of a commit (the machine's projector): otherwise none is kept.
      const kept: StoredEvent[] | undefined = this.onCommitted ? [] : undefined;
      this.db.exec('BEGIN');
      try {
        let held = 0;
        while (applied < commitEvents) {
          const page = await this.store.readAll({ after: read, maxCount: CATCH_UP_PAGE });
          if (page.length === 0) break;
          first ??= page[0];
          read = page[page.length - 1].position;
          this.applyEvents(page, read, apply, false, first.id);
          applied += page.length;
          held += page.length;
          if (kept) for (const event of page) kept.push(event);
          if (held >= flushEvents) {
            for (const projection of this.projections) projection.flush?.(this.db);
            held = 0;
          }
        }
        if (held > 0) for (const projection of this.projections) projection.flush?.(this.db);
        this.db.exec('COMMIT');
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        this.discardHeld();
        // A read that failed before any page was applied (the store unavailable) leaves no page to apply again.
        if (isStorageFailure(error) || read === from) throw error;
        for (let after = from; after < read;) {
          const page = await this.store.readAll({ after, maxCount: CATCH_UP_PAGE });
          if (page.length === 0) break;
          this.applyBatch(page);
          after = page[page.length - 1].position;
        }
        continue;
      }
      if (!first) break;
      this.advance(first.id, read, applied);
      if (kept) this.onCommitted?.(kept);
      this.releaseWaiters();
    }
    for (const projection of this.projections) projection.caughtUp?.();
  }

  private follow(): void {
    const subscription = this.store.subscribe({ after: this.position });
    this.subscription = subscription;
    this.loop = (async () => {
      try {
        await forEachBatch(subscription, (batch) => this.applyBatch(batch));
      } catch (error) {
        this.lastFailure = error;
        this.log.error({ err: error }, 'projection subscription failed; restarting it');
        if (this.subscription === subscription)
          this.clock.setTimeout(() => this.subscription === subscription && this.follow(), 1_000).unref();
      }
    })();
  }

  private applyBatch(events: readonly StoredEvent[]): void {
    const last = events[events.length - 1].position;
    if (!this.writes(events, last)) {
      this.committed(events);
      return;
    }
    try {
      // The fast path: the whole batch in one transaction, no savepoint per event; rows held by the read
      // models during the batch are written once at its end.
      this.db.transaction(() => {
        this.applyEvents(events, last, (projection, event) => projection.apply(event, this.db), true);
      })();
    } catch (error) {
      // The batch rolled back: rows the read models held for it were never written.
      this.discardHeld();
      // The disk, not a handler: no event is to blame, and skipping any would leave the read model behind
      // the log for good. The caller retries the whole batch later (follow() restarts its subscription).
      if (isStorageFailure(error)) throw error;
      // A handler threw. Apply the batch again with each event in a savepoint of its own, so only the
      // failing event is skipped (and logged), and the read model goes on.
      try {
        this.db.transaction(() =>
          this.applyEvents(events, last, (projection, event) => this.applyIsolated(projection, event), false),
        )();
      } catch (retryError) {
        this.discardHeld();
        throw retryError;
      }
    }
    this.committed(events);
  }

  /** The projections (their indexes) that take an event of this type. */
  private takersOf(type: string): number[] {
    let taking = this.takers.get(type);
    if (taking === undefined) {
      taking = this.projections.flatMap((p, i) => (p.handles === 'all' || p.handles.has(type) ? [i] : []));
      this.takers.set(type, taking);
    }
    return taking;
  }

  /** Whether the batch has anything to write: an event a read model takes, or a checkpoint that lags too far. */
  private writes(events: readonly StoredEvent[], last: number): boolean {
    for (const projection of this.projections) if (this.lagsAfter(projection, events.length, last)) return true;
    for (const event of events) {
      for (const i of this.takersOf(event.type))
        if (event.position > (this.checkpoints.get(this.projections[i].name) ?? 0)) return true;
    }
    return false;
  }

  /** Whether the read model's checkpoint row would lag too far behind once these events pass it by. */
  private lagsAfter(projection: Projection, events: number, last: number): boolean {
    if ((this.checkpoints.get(projection.name) ?? 0) >= last) return false;
    return (this.unsaved.get(projection.name) ?? 0) + events >= CHECKPOINT_LAG_EVENTS;
  }

  /** Drops the rows the read models hold for a batch that did not commit (RowBuffer.discard). */
  private discardHeld(): void {
    this.written.clear();
    for (const projection of this.projections) projection.discard?.();
  }

  /** Only now, after the commit: a rolled-back first attempt must not move the in-memory checkpoints. */
  private committed(events: readonly StoredEvent[]): void {
    this.advance(events[0].id, events[events.length - 1].position, events.length);
    this.onCommitted?.(events);
    this.releaseWaiters();
  }

  /** The in-memory checkpoints after a commit of `count` events, from the one with id `firstId` to position `last`. */
  private advance(firstId: string, last: number, count: number): void {
    for (const projection of this.projections) {
      const checkpoint = this.checkpoints.get(projection.name) ?? 0;
      if (checkpoint >= last) continue;
      if (checkpoint === 0) this.stores.set(projection.name, storeIdentity(this.store.kind, firstId));
      const unsaved = this.written.has(projection) ? 0 : (this.unsaved.get(projection.name) ?? 0) + count;
      this.unsaved.set(projection.name, unsaved);
      this.checkpoints.set(projection.name, last);
    }
    this.written.clear();
    this.applied += count;
    this.position = last;
    this.lastFailure = undefined;
  }

  private applyEvents(
    events: readonly StoredEvent[],
    last: number,
    apply: (projection: Projection, event: StoredEvent) => void,
    flush: boolean,
    /** The id of the first event of the transaction (a rebuild's spans many calls). */
    firstId = events[0].id,
  ): void {
    // Each projection with the events it takes (those of its types past its checkpoint).
    const projections = this.projections;
    const from = projections.map((p) => this.checkpoints.get(p.name) ?? 0);
    const took = new Array<boolean>(projections.length).fill(false);
    for (const event of events) {
      const { position } = event;
      for (const i of this.takersOf(event.type))
        if (position > from[i]) {
          took[i] = true;
          apply(projections[i], event);
        }
    }
    if (flush) for (const projection of projections) projection.flush?.(this.db);
    for (let i = 0; i < projections.length; i++) {
      const projection = projections[i];
      if (from[i] >= last) continue;
      // Not taken and not lagging far: its row stays behind (a restart reads these events again, and skips them).
      if (!took[i] && !this.lagsAfter(projection, events.length, last)) continue;
      // Fed from the very start, this batch opens with the first event of the log: the store is named by it.
      const store = from[i] === 0 ? storeIdentity(this.store.kind, firstId) : this.storeOf(projection);
      this.upsertCheckpoint.run(projection.name, projection.version, last, store, events[events.length - 1].id);
      this.written.add(projection);
    }
  }

  private storeOf(projection: Projection): string {
    return this.stores.get(projection.name) ?? storeIdentity(this.store.kind, undefined);
  }

  /**
   * One event in a savepoint: a handler that throws is logged and its partial writes undone (a rebuild
   * meets the same event and skips it the same way).
   */
  private applyIsolated(projection: Projection, event: StoredEvent): void {
    try {
      this.db.transaction(() => {
        projection.apply(event, this.db);
        projection.flush?.(this.db);
      })();
    } catch (error) {
      projection.discard?.();
      // Only a handler's own failure is skipped. A storage failure fails the batch; so does one after which
      // SQLite rolled back the whole transaction itself (later writes would each commit on their own).
      if (isStorageFailure(error) || !this.db.inTransaction) throw error;
      this.log.error(
        { err: error, projection: projection.name, position: event.position, type: event.type },
        'projection handler failed; event skipped',
      );
    }
  }

  /** Only used for position 0 (a read model set up or reset): its store is named by the first event it applies. */
  private saveCheckpoint(projection: Projection, position: 0): void {
    const store = storeIdentity(this.store.kind, undefined);
    this.upsertCheckpoint.run(projection.name, projection.version, position, store, null);
    this.checkpoints.set(projection.name, position);
    this.unsaved.set(projection.name, 0);
    this.stores.set(projection.name, store);
  }

  private releaseWaiters(): void {
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.position <= this.position) {
        this.clock.clear(waiter.timer);
        waiter.resolve();
      } else still.push(waiter);
    }
    this.waiters = still;
  }
}
