/**
 * The outbox and idempotency read models fed as one projection, with one checkpoint: both read the same
 * OutboxMessageQueued events, and a send's answer (which waits for its event to be projected) then
 * depends on one checkpoint row instead of two.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../../eventstore/event-store.js';
import type { Projection } from '../../projections/projection.js';

export class CombinedProjection implements Projection {
  readonly version: number;
  readonly handles: ReadonlySet<string>;

  constructor(
    readonly name: string,
    private readonly parts: readonly Projection[],
  ) {
    // Any part's new version is a new version of the whole (its tables are then rebuilt together).
    this.version = parts.reduce((version, part) => version * 1_000 + part.version, 1);
    const types = new Set<string>();
    for (const part of parts) {
      if (part.handles === 'all')
        throw new TypeError(`${part.name} handles every event: combine only projections with a list of types`);
      for (const type of part.handles) types.add(type);
    }
    this.handles = types;
    this.deferredIndexes = parts.flatMap((part) => part.deferredIndexes ?? []);
  }

  readonly deferredIndexes: readonly string[];

  setup(db: Database.Database): void {
    for (const part of this.parts) part.setup(db);
  }

  reset(db: Database.Database): void {
    for (const part of this.parts) part.reset(db);
  }

  apply(event: StoredEvent, db: Database.Database): void {
    for (const part of this.parts) if (part.handles !== 'all' && part.handles.has(event.type)) part.apply(event, db);
  }

  flush(db: Database.Database): void {
    for (const part of this.parts) part.flush?.(db);
  }

  discard(): void {
    for (const part of this.parts) part.discard?.();
  }

  caughtUp(): void {
    for (const part of this.parts) part.caughtUp?.();
  }
}
