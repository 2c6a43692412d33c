/**
 * The numbers each account blocks, fed only from the account stream (a rebuild gives the same table).
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { Projection } from '../projections/projection.js';
import type { AccountEvent } from './account-events.js';

type HandledEvent = AccountEvent | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set([
  'ContactBlocked',
  'ContactUnblocked',
  'BlocklistRefreshed',
  'DeviceDeleted',
]);
const isHandled = eventGuard<HandledEvent>(HANDLED);

export class BlocklistReadModel implements Projection {
  readonly name = 'blocklist';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<BlocklistReadModel['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(
      'CREATE TABLE IF NOT EXISTS blocked_contacts (device_id TEXT NOT NULL, number TEXT NOT NULL, PRIMARY KEY (device_id, number)) WITHOUT ROWID',
    );
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM blocked_contacts');
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    const sql = this.sql();
    switch (event.type) {
      case 'ContactBlocked':
        sql.insert.run(event.data.deviceId, event.data.number);
        return;
      case 'ContactUnblocked':
        sql.remove.run(event.data.deviceId, event.data.number);
        return;
      case 'BlocklistRefreshed':
        sql.clear.run(event.data.deviceId);
        for (const number of event.data.numbers) sql.insert.run(event.data.deviceId, number);
        return;
      case 'DeviceDeleted':
        sql.clear.run(event.data.deviceId);
        return;
    }
  }

  list(deviceId: string): string[] {
    return this.sql()
      .list.all(deviceId)
      .map((row) => row.number);
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      insert: this.db.prepare<[string, string]>(
        'INSERT OR IGNORE INTO blocked_contacts (device_id, number) VALUES (?, ?)',
      ),
      remove: this.db.prepare<[string, string]>('DELETE FROM blocked_contacts WHERE device_id = ? AND number = ?'),
      clear: this.db.prepare<[string]>('DELETE FROM blocked_contacts WHERE device_id = ?'),
      list: this.db.prepare<[string], { number: string }>(
        'SELECT number FROM blocked_contacts WHERE device_id = ? ORDER BY number',
      ),
    };
  }
}
