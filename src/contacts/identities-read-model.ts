/**
 * The identities read model: per device, the LID ↔ number pairs the account learned (IdentitiesLearned
 * on the contacts stream), for GET /contacts/:id/identity. A number has one LID and a LID one number: a
 * pair replaces any earlier pair of either. Fed only from the log (a rebuild gives the same table); the
 * route answers from it alone and never guesses a pair.
 */
import type Database from 'better-sqlite3';
import type { DeviceEvent } from '../devices/device-events.js';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { Projection } from '../projections/projection.js';
import type { ContactEvent } from './contact-events.js';

export interface IdentityView {
  number: string | null;
  lid: string | null;
}

type HandledEvent =
  Extract<ContactEvent, { type: 'IdentitiesLearned' }> | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set(['IdentitiesLearned', 'DeviceDeleted']);
const isHandled = eventGuard<HandledEvent>(HANDLED);

export class IdentitiesReadModel implements Projection {
  readonly name = 'identities';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<IdentitiesReadModel['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`CREATE TABLE IF NOT EXISTS identities (
      device_id TEXT NOT NULL, number TEXT NOT NULL, lid TEXT NOT NULL,
      PRIMARY KEY (device_id, number)) WITHOUT ROWID;
    CREATE UNIQUE INDEX IF NOT EXISTS identities_by_lid ON identities (device_id, lid)`);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM identities');
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    const sql = this.sql();
    if (event.type === 'DeviceDeleted') {
      sql.clear.run(event.data.deviceId);
      return;
    }
    for (const { number, lid } of event.data.pairs) {
      sql.removePair.run(event.data.deviceId, number, lid);
      sql.insert.run(event.data.deviceId, number, lid);
    }
  }

  /** `id`: a number or `<digits>@lid`; unknown: both null. */
  identity(deviceId: string, id: string): IdentityView {
    const row = id.endsWith('@lid') ? this.sql().byLid.get(deviceId, id) : this.sql().byNumber.get(deviceId, id);
    return row ? { number: row.number, lid: row.lid } : { number: null, lid: null };
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    type Row = { number: string; lid: string };
    return {
      removePair: this.db.prepare<[string, string, string]>(
        'DELETE FROM identities WHERE device_id = ? AND (number = ? OR lid = ?)',
      ),
      insert: this.db.prepare<[string, string, string]>(
        'INSERT INTO identities (device_id, number, lid) VALUES (?, ?, ?)',
      ),
      clear: this.db.prepare<[string]>('DELETE FROM identities WHERE device_id = ?'),
      byNumber: this.db.prepare<[string, string], Row>(
        'SELECT number, lid FROM identities WHERE device_id = ? AND number = ?',
      ),
      byLid: this.db.prepare<[string, string], Row>(
        'SELECT number, lid FROM identities WHERE device_id = ? AND lid = ?',
      ),
    };
  }
}
