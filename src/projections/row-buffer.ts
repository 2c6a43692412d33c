/**
 * Rows a projection changes within one batch of events, held in memory and written once at the end of the
 * batch (Projection.flush), inside the runner's transaction: during a rebuild a message's life (queued …
 * read) mostly falls within one batch, and five writes of a row become one. Nothing reads the tables while
 * a batch is applied, so they and the buffer never disagree where anyone could see it. The projection must
 * be the one writer of its tables. docs/architecture.md, "Batches and rebuilds".
 */
interface Held<Row> {
  key: string;
  row: Row | undefined;
  stored: boolean;
  dirty: boolean;
  saved: Row | undefined;
  /** The batch that last moved it to the most recently used end. */
  used: number;
  /** No longer kept (pushed out at a flush, or written once: putOnce). */
  dropped: boolean;
  /** Written at the end of the batch and then forgotten, whatever `keep` says (putOnce). */
  once: boolean;
}

export class RowBuffer<Row extends object> {
  private readonly rows = new Map<string, Held<Row>>();
  /** The rows put since the last flush, in the order first put (a flush visits these, not every row kept). */
  private dirty: Array<Held<Row>> = [];
  /** Since emptied(): every key written to the table, with where its row is (any other key has no row there). */
  private written: Map<string, unknown> | undefined;
  /** Counts flushes: a row is moved to the most recently used end once per batch, not at every get. */
  private batch = 0;

  constructor(
    /** `located`: where the row was written (`locate`), for a key written since emptied(); else undefined. */
    private readonly load: (key: string, located: unknown) => Row | undefined,
    /** `saved`: the row as stored (only with `snapshots`; undefined for a new row). */
    private readonly write: (row: Row, stored: boolean, saved: Row | undefined) => void,
    /**
     * How many rows stay known after a flush (the most recently used ones, as written); 0: none. Live traffic
     * touches a message again a moment later, each status in its own small batch, and would otherwise read
     * back the row it just wrote every time.
     */
    private readonly keep = 0,
    /**
     * Hand write() the row as the table holds it (a copy taken when loaded or last written), so that an UPDATE
     * sets only the columns that changed: SQLite rewrites every index on a column named in SET, changed or not.
     */
    private readonly snapshots = false,
    /**
     * Where a row written since emptied() is (e.g. its rowid; never undefined), handed back to `load`, so that a rebuild can
     * defer even the index keys are looked up by (a rolled-back batch leaves a place with no row: load finds none).
     */
    private readonly locate?: (row: Row) => unknown,
  ) {}

  /** The row as the batch left it so far (loaded once from the table). */
  get(key: string): Row | undefined {
    const held = this.rows.get(key);
    if (held) {
      if (this.keep > 0 && held.used !== this.batch) {
        // Most recently used last: the oldest go first when too many are kept. Once a batch: a rebuild's batch gets
        // each message row four or five times (its statuses), and moving it each time was a twelfth of the rebuild.
        held.used = this.batch;
        this.rows.delete(key);
        this.rows.set(key, held);
      }
      return held.row;
    }
    const written = this.written;
    // One lookup of a map as large as the table (a key not written holds no place: see flush()).
    const place = written?.get(key);
    const row = !written
      ? this.load(key, undefined)
      : place !== undefined
        ? this.load(key, this.locate ? place : undefined)
        : undefined;
    this.rows.set(key, {
      key,
      row,
      stored: row !== undefined,
      dirty: false,
      saved: this.snapshots && row ? { ...row } : undefined,
      used: this.batch,
      dropped: false,
      once: false,
    });
    return row;
  }

  /** A row to write at the end of the batch (a new one, or one got from get() and changed in place). */
  put(key: string, row: Row, once = false): void {
    const held = this.rows.get(key);
    if (held) {
      held.row = row;
      held.once = once;
      if (!held.dirty) {
        held.dirty = true;
        this.dirty.push(held);
      }
    } else {
      const added = { key, row, stored: false, dirty: true, saved: undefined, used: this.batch, dropped: false, once };
      this.rows.set(key, added);
      this.dirty.push(added);
    }
  }

  /**
   * A row written at the end of the batch and not kept after it (a message imported from history: seldom touched
   * again soon, and each one kept for a while outlived the young generation and grew the old one).
   */
  putOnce(key: string, row: Row): void {
    this.put(key, row, true);
  }

  /** How many rows are in memory now (kept from earlier batches, or of this one). */
  get size(): number {
    return this.rows.size;
  }

  flush(): void {
    this.batch++;
    const dirty = this.dirty;
    this.dirty = [];
    for (const held of dirty) {
      if (held.row !== undefined) {
        this.write(held.row, held.stored, held.saved);
        if (!held.stored) this.written?.set(held.key, this.locate ? this.locate(held.row) : true);
        held.stored = true;
        if (held.once) {
          held.dropped = true;
          this.rows.delete(held.key);
        }
      }
      held.dirty = false;
    }
    if (this.keep === 0) {
      this.rows.clear();
      return;
    }
    for (const [key, held] of this.rows) {
      if (this.rows.size <= this.keep) break;
      held.dropped = true;
      this.rows.delete(key);
    }
    // The row as now stored, for the rows still kept only: a rebuild's batch writes many times more rows than
    // are kept, and a copy of each would only be garbage.
    if (this.snapshots)
      for (const held of dirty) if (held.row !== undefined && !held.dropped) held.saved = { ...held.row };
  }

  /** The batch rolled back: forget what it changed. */
  discard(): void {
    this.rows.clear();
    this.dirty = [];
  }

  /** The table was just emptied (a rebuild): a key not written from now on need not be looked up (nothing else writes the table). */
  emptied(): void {
    this.discard();
    this.written = new Map();
  }

  /** The rebuild is over: look keys up again (and forget the written ones, a set as large as the table). */
  caughtUp(): void {
    this.written = undefined;
  }
}
