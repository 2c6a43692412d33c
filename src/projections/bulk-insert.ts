import type Database from 'better-sqlite3';

/** Rows per multi-row INSERT: one statement run for many rows costs less than one run per row. */
const ROWS_PER_STATEMENT = 64;

/**
 * Rows to insert into one table, gathered during a batch and written by flush() with multi-row INSERT
 * statements (the values of each row in the order of `columns`). Statements are prepared on first use:
 * a read model's tables exist only after its setup().
 */
export class BulkInsert {
  private values: unknown[] = [];
  private statements: { one: Database.Statement; many: Database.Statement } | undefined;
  private readonly width: number;

  /** `prefix`: the statement's start, e.g. `INSERT OR IGNORE INTO t`; `suffix`: e.g. an ON CONFLICT clause. */
  constructor(
    private readonly db: Database.Database,
    private readonly prefix: string,
    private readonly columns: readonly string[],
    private readonly suffix = '',
  ) {
    this.width = columns.length;
  }

  get size(): number {
    return this.values.length / this.width;
  }

  /** One row's values, in the order of the columns. */
  add(...row: unknown[]): void {
    for (const value of row) this.values.push(value);
  }

  /** One row given as an object with a property per column. */
  addObject(row: object): void {
    const fields = row as Record<string, unknown>;
    for (const column of this.columns) this.values.push(fields[column]);
  }

  /** One row's values taken from an array (not kept). */
  addRow(row: readonly unknown[]): void {
    for (const value of row) this.values.push(value);
  }

  flush(): void {
    const values = this.values;
    if (values.length === 0) return;
    this.values = [];
    const { one, many } = (this.statements ??= this.prepare());
    const chunk = this.width * ROWS_PER_STATEMENT;
    let i = 0;
    for (; i + chunk <= values.length; i += chunk) many.run(values.slice(i, i + chunk));
    for (; i < values.length; i += this.width) one.run(values.slice(i, i + this.width));
  }

  discard(): void {
    this.values = [];
  }

  private prepare() {
    const row = `(${this.columns.map(() => '?').join(', ')})`;
    const sql = (rows: number) => `${this.prefix} (${this.columns.join(', ')}) VALUES ${Array<string>(rows).fill(row).join(', ')} ${this.suffix}`;
    return { one: this.db.prepare(sql(1)), many: this.db.prepare(sql(ROWS_PER_STATEMENT)) };
  }
}
