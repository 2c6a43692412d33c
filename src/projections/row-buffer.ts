/**
 * Rows a projection changes within one batch of events, held in memory and written once at the end of the
 * batch (Projection.flush), inside the runner's transaction. A message's life (queued, sending, sent,
 * delivered, read) mostly falls within one batch during a rebuild: five writes of a row become one.
 * Nothing reads the tables while a batch is applied (it runs synchronously), so the tables and the buffer
 * never disagree where anyone could see it.
 */
export class RowBuffer<Row> {
  private readonly rows = new Map<string, { row: Row | undefined; stored: boolean; dirty: boolean }>();

  constructor(
    private readonly load: (key: string) => Row | undefined,
    private readonly write: (row: Row, stored: boolean) => void,
  ) {}

  /** The row as the batch left it so far (loaded once from the table). */
  get(key: string): Row | undefined {
    const held = this.rows.get(key);
    if (held) return held.row;
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
    for (const held of this.rows.values()) if (held.dirty && held.row !== undefined) this.write(held.row, held.stored);
    this.rows.clear();
  }

  /** The batch rolled back: forget what it changed. */
  discard(): void {
    this.rows.clear();
  }
}
