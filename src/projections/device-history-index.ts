import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import type { Projection } from './projection.js';

export interface HistoryEntry {
  position: number;
  streamId: string;
  revision: number;
}

/**
 * Where each device's events are in the log: every event whose data names a `deviceId` (all device,
 * session, message, outbox and hook events do), whatever stream it is on. The events themselves stay in
 * the store; this index only lets a device's timeline be paged across its streams in log order.
 */
export class DeviceHistoryIndex implements Projection {
  readonly name = 'device-history';
  readonly version = 1;
  readonly handles = 'all' as const;
  private statements: ReturnType<DeviceHistoryIndex['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS device_history (
      device_id TEXT NOT NULL, position INTEGER NOT NULL, stream_id TEXT NOT NULL, revision INTEGER NOT NULL,
      PRIMARY KEY (device_id, position)) WITHOUT ROWID`);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM device_history');
  }

  apply(event: StoredEvent): void {
    const deviceId = (event.data as { deviceId?: unknown } | null)?.deviceId;
    if (typeof deviceId !== 'string') return;
    this.sql().insert.run(deviceId, event.position, event.streamId, event.revision);
  }

  /** Entries of one device from `from` (a position, inclusive), oldest first. */
  page(deviceId: string, from: number, limit: number): HistoryEntry[] {
    return this.sql().page.all(deviceId, from, limit);
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      insert: this.db.prepare('INSERT OR IGNORE INTO device_history (device_id, position, stream_id, revision) VALUES (?, ?, ?, ?)'),
      page: this.db.prepare<[string, number, number], HistoryEntry>(
        `SELECT position, stream_id AS streamId, revision FROM device_history
         WHERE device_id = ? AND position >= ? ORDER BY position LIMIT ?`,
      ),
    };
  }
}
