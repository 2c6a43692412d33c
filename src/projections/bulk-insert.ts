import type Database from 'better-sqlite3';

/** Most rows per multi-row INSERT: one statement run for many rows costs less than one run per row. */
export const MOST_ROWS_PER_STATEMENT = 64;

/**
 * Rows to insert into one table during a batch, written with multi-row INSERT statements (the values of each row
 * in the order of `columns`), within the batch's transaction. Statements are prepared on first use: a read
 * model's tables exist only after its setup().
 *
 * Rows in no particular order are written as soon as a whole statement's worth is gathered: a rebuild's batch
 * gathers hundreds of thousands, and holding them all until its end only made garbage that lived long enough to
 * be copied. flush() writes the rest with one statement per power of two (100 rows: 64 + 32 + 4), each size
 * prepared once, so a small live batch is not written a row at a time either. The table must be one the read
 * model does not read back during the batch (its rows are written before flush()).
 *
 * With `keyColumns`, the rows are held until flush() and written in the order of their first `keyColumns`
 * values (the table's key): rows gathered across many devices then go into the b-tree side by side, each
 * insert next to the one before (on pages still in the CPU's cache), instead of each on a page of its own.
 */
export class BulkInsert {
  /** Without keyColumns: the values of the rows not yet written, one after the other (fewer than a statement's worth). */
  private pending: unknown[] = [];
  /** With keyColumns: every row of the batch, written in key order by flush(). */
  private held: unknown[][] = [];
  /** Statements by the number of rows they insert (powers of two), each with a reused array of its values. */
  private readonly statements = new Map<number, { statement: Database.Statement; values: unknown[] }>();
  private readonly width: number;
  private readonly sorted: boolean;

  /** `prefix`: the statement's start, e.g. `INSERT OR IGNORE INTO t`; `suffix`: e.g. an ON CONFLICT clause. */
  constructor(
    private readonly db: Database.Database,
    private readonly prefix: string,
    private readonly columns: readonly string[],
    private readonly options: { suffix?: string; keyColumns?: number } = {},
  ) {
    this.width = columns.length;
    this.sorted = (options.keyColumns ?? 0) > 0;
  }

  /** Rows gathered and not yet written. */
  get size(): number {
    return this.sorted ? this.held.length : this.pending.length / this.width;
  }

  /** One row's values, in the order of the columns. */
  add(...row: unknown[]): void {
    if (row.length !== this.width) throw new Error(`a row of ${this.width} values expected, got ${row.length}`);
    if (this.sorted) this.held.push(row);
    else {
      for (const value of row) this.pending.push(value);
      this.writeWhenWhole();
    }
  }

  /** One row given as an object with a property per column. */
  addObject(row: object): void {
    const fields = row as Record<string, unknown>;
    if (this.sorted) {
      const values = new Array<unknown>(this.width);
      for (let c = 0; c < this.width; c++) values[c] = fields[this.columns[c]];
      this.held.push(values);
    } else {
      for (const column of this.columns) this.pending.push(fields[column]);
      this.writeWhenWhole();
    }
  }

  /** Writes every row not yet written. */
  flush(): void {
    if (this.sorted) this.flushHeld();
    else this.flushPending();
  }

  /** The rows not yet written are dropped (those written go with the batch's transaction). */
  discard(): void {
    this.pending = [];
    this.held = [];
  }

  private writeWhenWhole(): void {
    if (this.pending.length < MOST_ROWS_PER_STATEMENT * this.width) return;
    this.statementFor(MOST_ROWS_PER_STATEMENT).statement.run(this.pending);
    this.pending.length = 0;
  }

  private flushPending(): void {
    const values = this.pending;
    const rows = values.length / this.width;
    const width = this.width;
    for (let row = 0; row < rows;) {
      const count = largestPowerOfTwoUpTo(rows - row);
      const { statement, values: bound } = this.statementFor(count);
      for (let i = 0, from = row * width; i < count * width; i++) bound[i] = values[from + i];
      statement.run(bound);
      row += count;
    }
    values.length = 0;
  }

  private flushHeld(): void {
    const rows = this.held;
    if (rows.length === 0) return;
    this.held = [];
    rows.sort(byLeading(this.options.keyColumns!));
    const width = this.width;
    for (let row = 0; row < rows.length;) {
      const count = Math.min(MOST_ROWS_PER_STATEMENT, largestPowerOfTwoUpTo(rows.length - row));
      const { statement, values: bound } = this.statementFor(count);
      for (let r = 0; r < count; r++) {
        const values = rows[row + r];
        for (let c = 0; c < width; c++) bound[r * width + c] = values[c];
      }
      statement.run(bound);
      row += count;
    }
  }

  private statementFor(rows: number) {
    let prepared = this.statements.get(rows);
    if (!prepared) {
      const row = `(${this.columns.map(() => '?').join(', ')})`;
      const sql = `${this.prefix} (${this.columns.join(', ')}) VALUES ${Array<string>(rows).fill(row).join(', ')} ${this.options.suffix ?? ''}`;
      prepared = { statement: this.db.prepare(sql), values: new Array<unknown>(rows * this.width) };
      this.statements.set(rows, prepared);
    }
    return prepared;
  }
}

/** 1 → 1, 5 → 4, 64 → 64, 100 → 64. */
function largestPowerOfTwoUpTo(n: number): number {
  return 1 << (31 - Math.clz32(n));
}

/** Orders rows by their first `count` values (strings or numbers), as the table's key orders them (a stable sort). */
function byLeading(count: number): (a: unknown[], b: unknown[]) => number {
  return (a, b) => {
    for (let i = 0; i < count; i++) {
      const x = a[i] as string | number;
      const y = b[i] as string | number;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
}
