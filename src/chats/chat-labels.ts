/**
 * WhatsApp Business labels in the message index: the device's labels (table `chat_labels`, written as they
 * come) and the label ids on each chat (`chats.labels`, a JSON array). Label events are LabelUpdated and
 * ChatLabelChanged on `inbox-<deviceId>` (docs/api-guide.md, "Labels").
 */
import type Database from 'better-sqlite3';
import type { ChatLabelChangedData, LabelUpdatedData } from '../inbox/inbox-events.js';

/** A label as GET /labels shows it. */
export interface LabelView {
  labelId: string;
  name: string;
  color: number;
}

export function createLabelTable(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS chat_labels (
    device_id TEXT NOT NULL,
    label_id  TEXT NOT NULL,
    name      TEXT NOT NULL,
    color     INTEGER NOT NULL,
    deleted   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (device_id, label_id)
  ) WITHOUT ROWID`);
}

/** A chat's labels (JSON array or null) after the change. */
export function labelsAfter(
  labels: string | null,
  change: Pick<ChatLabelChangedData, 'labelId' | 'action'>,
): string | null {
  const ids = (labels ? (JSON.parse(labels) as string[]) : []).filter((id) => id !== change.labelId);
  if (change.action === 'add') ids.push(change.labelId);
  return ids.length > 0 ? JSON.stringify(ids) : null;
}

/** Writes the device's labels as they are made, changed and deleted (a deleted one is kept, marked, for its id). */
export class LabelTable {
  private statements: ReturnType<LabelTable['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  apply(d: LabelUpdatedData): void {
    this.sql().upsert.run(d.deviceId, d.labelId, d.name, d.color, d.deleted ? 1 : 0);
  }

  /** The device's labels, deleted ones left out, by id. */
  list(deviceId: string): LabelView[] {
    return this.sql()
      .list.all(deviceId)
      .map((row) => ({ labelId: row.label_id, name: row.name, color: row.color }));
  }

  /** Every label id the device ever had, deleted ones included (a new label takes an id none of them has). */
  ids(deviceId: string): string[] {
    return this.sql()
      .ids.all(deviceId)
      .map((row) => row.label_id);
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      upsert: this.db.prepare<[string, string, string, number, number]>(
        `INSERT INTO chat_labels (device_id, label_id, name, color, deleted) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (device_id, label_id) DO UPDATE SET name = excluded.name, color = excluded.color, deleted = excluded.deleted`,
      ),
      ids: this.db.prepare<[string], { label_id: string }>('SELECT label_id FROM chat_labels WHERE device_id = ?'),
      list: this.db.prepare<[string], { label_id: string; name: string; color: number }>(
        'SELECT label_id, name, color FROM chat_labels WHERE device_id = ? AND deleted = 0 ORDER BY label_id',
      ),
    };
  }
}
