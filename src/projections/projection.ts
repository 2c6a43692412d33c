import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';

/**
 * A read model fed from the event log. Handlers are synchronous and run inside the runner's batch
 * transaction, together with the checkpoint, so a read model and its checkpoint never disagree.
 */
export interface Projection {
  readonly name: string;
  /** Bump when tables or handlers change: the runner then rebuilds this read model from position 0. */
  readonly version: number;
  /** Event types it handles ('all' for every event); the runner skips the others without calling it. */
  readonly handles: ReadonlySet<string> | 'all';
  /**
   * Secondary indexes that apply() never reads (they serve queries only): a full rebuild drops them and
   * builds each once at its end, a sort instead of a million scattered inserts.
   */
  readonly deferredIndexes?: readonly string[];
  /** Creates its tables; must be idempotent. */
  setup(db: Database.Database): void;
  /** Empties its tables before a rebuild. */
  reset(db: Database.Database): void;
  apply(event: StoredEvent, db: Database.Database): void;
  /**
   * Writes what apply() held in memory (src/projections/row-buffer.ts); called at the end of every batch,
   * in its transaction, before the checkpoint.
   */
  flush?(db: Database.Database): void;
  /** The batch rolled back: drops what apply() held in memory. */
  discard?(): void;
  /**
   * The runner has read to the end of the log after start or rebuild: what a read model kept only to
   * rebuild faster (the keys written since reset(), src/projections/row-buffer.ts) can go.
   */
  caughtUp?(): void;
}
