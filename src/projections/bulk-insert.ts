import type Database from 'better-sqlite3';

/** Rows per multi-row INSERT: one statement run for many rows costs less than one run per row. */
const ROWS_PER_STATEMENT = 64;

/**
 * Rows to insert into one table, gathered during a batch and written by flush() with multi-row INSERT
 * statements (the values of each row in the order of `columns`). Statements are prepared on first use:
 * a read model's tables exist only after its setup().
 *
 * With `keyColumns`, flush() writes the rows in the order of their first `keyColumns` values (the table's
 * key): rows gathered across many devices then go into the b-tree side by side, each insert next to the
 * one before (on pages still in the CPU's cache), instead of each on a page of its own.
 */
export class BulkInsert {
  private rows: unknown[][] = [];
  private statements: { one: Database.Statement; many: Database.Statement } | undefined;

  /** `prefix`: the statement's start, e.g. `INSERT OR IGNORE INTO t`; `suffix`: e.g. an ON CONFLICT clause. */
  constructor(
    private readonly db: Database.Database,
    private readonly prefix: string,
    private readonly columns: readonly string[],
    private readonly options: { suffix?: string; keyColumns?: number } = {},
  ) {}

  /** One row's values, in the order of the columns. */
  add(...row: unknown[]): void {
    this.rows.push(row);
  }

  /** One row given as an object with a property per column. */
  addObject(row: object): void {
    const fields = row as Record<string, unknown>;
    const values = new Array<unknown>(this.columns.length);
    for (let i = 0; i < values.length; i++) values[i] = fields[this.columns[i]];
    this.rows.push(values);
  }

  flush(): void {
    const rows = this.rows;
    if (rows.length === 0) return;
    this.rows = [];
    if (this.options.keyColumns) rows.sort(byLeading(this.options.keyColumns));
    const { one, many } = (this.statements ??= this.prepare());
    let i = 0;
    if (rows.length >= ROWS_PER_STATEMENT) {
      const values: unknown[] = [];
      for (; i + ROWS_PER_STATEMENT <= rows.length; i += ROWS_PER_STATEMENT) {
        values.length = 0;
        for (let r = i; r < i + ROWS_PER_STATEMENT; r++) for (const value of rows[r]) values.push(value);
        many.run(values);
      }
    }
    for (; i < rows.length; i++) one.run(rows[i]);
  }

  discard(): void {
    this.rows = [];
  }

  private prepare() {
    const row = `(${this.columns.map(() => '?').join(', ')})`;
    const sql = (rows: number) =>
      `${this.prefix} (${this.columns.join(', ')}) VALUES ${Array<string>(rows).fill(row).join(', ')} ${this.options.suffix ?? ''}`;
    return { one: this.db.prepare(sql(1)), many: this.db.prepare(sql(ROWS_PER_STATEMENT)) };
  }
}

/** Orders rows by their first `count` values (strings or numbers), as the table's key orders them. */
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
