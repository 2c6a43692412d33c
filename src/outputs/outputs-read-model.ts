/**
 * Every broker output with its configuration, recorded position and last error, fed from the outputs' streams
 * (the stream's own evolve, output-decider.ts): read by the /outputs routes and by the outputs' subscribers
 * when they start. A deleted output's row goes.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { Projection } from '../projections/projection.js';
import { type OutputState, outputDecider } from './output-decider.js';
import { OUTPUT_EVENT_TYPES, type OutputEvent } from './output-events.js';

const isOutputEvent = eventGuard<OutputEvent>(OUTPUT_EVENT_TYPES);

export type RecordedOutput = OutputState & { output: NonNullable<OutputState['output']> };

export class OutputsReadModel implements Projection {
  readonly name = 'outputs';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = OUTPUT_EVENT_TYPES;
  private statements: ReturnType<OutputsReadModel['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(
      'CREATE TABLE IF NOT EXISTS outputs (output_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL) WITHOUT ROWID',
    );
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM outputs');
  }

  apply(event: StoredEvent): void {
    if (!isOutputEvent(event)) return;
    const { outputId } = event.data;
    if (event.type === 'OutputDeleted') {
      this.sql().remove.run(outputId);
      return;
    }
    const row = this.sql().get.get(outputId);
    const before = row ? (JSON.parse(row.state) as OutputState) : outputDecider.initialState();
    const after = outputDecider.evolve(before, event);
    if (!after.output) return;
    this.sql().put.run(outputId, row?.seq ?? event.position, JSON.stringify(after));
  }

  /** Every output, oldest first. */
  list(): RecordedOutput[] {
    return this.sql()
      .list.all()
      .map((row) => JSON.parse(row.state) as RecordedOutput);
  }

  get(outputId: string): RecordedOutput | undefined {
    const row = this.sql().get.get(outputId);
    return row ? (JSON.parse(row.state) as RecordedOutput) : undefined;
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      get: this.db.prepare<[string], { seq: number; state: string }>(
        'SELECT seq, state FROM outputs WHERE output_id = ?',
      ),
      list: this.db.prepare<[], { state: string }>('SELECT state FROM outputs ORDER BY seq, output_id'),
      put: this.db.prepare<[string, number, string]>(
        'INSERT INTO outputs (output_id, seq, state) VALUES (?, ?, ?) ON CONFLICT (output_id) DO UPDATE SET state = excluded.state',
      ),
      remove: this.db.prepare<[string]>('DELETE FROM outputs WHERE output_id = ?'),
    };
  }
}
