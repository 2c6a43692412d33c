/**
 * Rows a projection changes within one batch of events, held in memory and written once at the end of the
 * batch (Projection.flush), inside the runner's transaction. A message's life (queued, sending, sent,
 * delivered, read) mostly falls within one batch during a rebuild: five writes of a row become one.
 * Nothing reads the tables while a batch is applied (it runs synchronously), so the tables and the buffer
 * never disagree where anyone could see it.
 *
 * With `keep`, the latest rows stay after a flush (as written): live traffic touches a message again a
 * moment later (queued, then sending, sent, delivered, read, each in its own small batch), and would
 * otherwise read back the row it just wrote every time. Only valid because the projection is the one
 * writer of its tables: every write goes through here, and a rolled-back batch forgets everything.
 */
export class RowBuffer<Row> {
  private readonly rows = new Map<string, { row: Row | undefined; stored: boolean; dirty: boolean }>();

  constructor(
    private readonly load: (key: string) => Row | undefined,
    private readonly write: (row: Row, stored: boolean) => void,
    /** How many rows stay known after a flush (the most recently used ones); 0: none. */
    private readonly keep = 0,
  ) {}

  /** The row as the batch left it so far (loaded once from the table). */
  get(key: string): Row | undefined {
    const held = this.rows.get(key);
    if (held) {
      if (this.keep > 0) {
        // Most recently used last: the oldest go first when too many are kept.
        this.rows.delete(key);
        this.rows.set(key, held);
      }
      return held.row;
    }
    const row = this.load(key);
    this.rows.set(key, { row, stored: row !== undefined, dirty: false });
    return row;
  }

  /** A row to write at the end of the batch (a new one, or one got from get() and changed in place). */
  put(key: string, row: Row): void {
    const held = this.rows.get(key);
    if (held) {
      held.row = row;
      held.dirty = true;
    } else this.rows.set(key, { row, stored: false, dirty: true });
  }

  flush(): void {
    for (const held of this.rows.values()) {
      if (!held.dirty) continue;
      if (held.row !== undefined) {
        this.write(held.row, held.stored);
        held.stored = true;
      }
      held.dirty = false;
    }
    if (this.keep === 0) {
      this.rows.clear();
      return;
    }
    for (const key of this.rows.keys()) {
      if (this.rows.size <= this.keep) break;
      this.rows.delete(key);
    }
  }

  /** The batch rolled back: forget what it changed. */
  discard(): void {
    this.rows.clear();
  }
}
