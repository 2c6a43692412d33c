import type Database from 'better-sqlite3';
import type { StoredEvent } from '../../src/eventstore/event-store.js';
import type { Projection } from '../../src/projections/projection.js';
import { RowBuffer } from '../../src/projections/row-buffer.js';

/**
 * A read model of tests: counts events per stream, its rows held per batch (RowBuffer) as the message index and the
 * outbox hold theirs; a `Boom` event's handler throws (after counting it). test/projections/projection-runner.test.ts,
 * read-model-file-rebuild.test.ts.
 */
export class BufferedCountingProjection implements Projection {
  readonly name = 'buffered-counts';
  readonly version = 1;
  readonly handles = new Set(['Tick', 'Boom']);
  readonly deferredIndexes = ['buffered_counts_by_n'];
  /** Calls of flush(): how often the runner wrote the rows held. */
  flushes = 0;
  private buffer: RowBuffer<{ stream: string; n: number }> | undefined;
  /** `padding`: bytes written beside each row it writes (a table of their own), to fill the file. */
  constructor(
    private readonly db: Database.Database,
    private readonly padding = 0,
  ) {}
  setup(db: Database.Database) {
    db.exec(`CREATE TABLE IF NOT EXISTS buffered_counts (stream TEXT PRIMARY KEY, n INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS buffered_counts_by_n ON buffered_counts (n);
      CREATE TABLE IF NOT EXISTS buffered_padding (bytes BLOB NOT NULL)`);
  }
  reset(db: Database.Database) {
    this.buffer = undefined;
    db.exec('DELETE FROM buffered_counts; DELETE FROM buffered_padding');
  }
  apply(event: StoredEvent) {
    const rows = (this.buffer ??= new RowBuffer(
      (stream) =>
        this.db
          .prepare<[string], { stream: string; n: number }>('SELECT stream, n FROM buffered_counts WHERE stream = ?')
          .get(stream),
      (row, stored) => {
        if (this.padding > 0)
          this.db.prepare('INSERT INTO buffered_padding (bytes) VALUES (zeroblob(?))').run(this.padding);
        return stored
          ? this.db.prepare('UPDATE buffered_counts SET n = ? WHERE stream = ?').run(row.n, row.stream)
          : this.db.prepare('INSERT INTO buffered_counts (stream, n) VALUES (?, ?)').run(row.stream, row.n);
      },
      // Rows stay known after a batch, as the message index keeps its own.
      100,
    ));
    const row = rows.get(event.streamId) ?? { stream: event.streamId, n: 0 };
    row.n++;
    rows.put(event.streamId, row);
    if (event.type === 'Boom') throw new Error('a handler bug');
  }
  flush() {
    this.flushes++;
    this.buffer?.flush();
  }
  discard() {
    this.buffer?.discard();
  }
}
