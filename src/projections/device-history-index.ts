import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import type { Projection } from './projection.js';

/**
 * Which streams hold each device's events: a stream is listed when its first event (revision 0) names a
 * `deviceId`, as every device, session, message, outbox, contact and webhook event does. One row per
 * stream, not per event, so the index costs nothing on the hot path or in a rebuild; the history itself
 * is read from those streams (see src/history/device-history.ts).
 */
export class DeviceHistoryIndex implements Projection {
  readonly name = 'device-streams';
  readonly version = 1;
  readonly handles = 'all' as const;
  private statements: ReturnType<DeviceHistoryIndex['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS device_streams (
      device_id TEXT NOT NULL, stream_id TEXT NOT NULL, PRIMARY KEY (device_id, stream_id)) WITHOUT ROWID`);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM device_streams');
  }

  apply(event: StoredEvent): void {
    if (event.revision !== 0) return;
    const deviceId = (event.data as { deviceId?: unknown } | null)?.deviceId;
    if (typeof deviceId === 'string') this.sql().insert.run(deviceId, event.streamId);
  }

  streamsOf(deviceId: string): string[] {
    return this.sql()
      .streams.all(deviceId)
      .map((row) => row.stream_id);
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      insert: this.db.prepare('INSERT OR IGNORE INTO device_streams (device_id, stream_id) VALUES (?, ?)'),
      streams: this.db.prepare<[string], { stream_id: string }>(
        'SELECT stream_id FROM device_streams WHERE device_id = ? ORDER BY stream_id',
      ),
    };
  }
}
