/**
 * Each device's settings, fed from its settings stream: read by the /settings routes (credentials
 * masked) and by the engines when they connect or a call rings (in full).
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { Projection } from '../projections/projection.js';
import { settingsDecider } from './settings-decider.js';
import { DEFAULT_SETTINGS, type DeviceSettings, type SettingsEvent } from './settings-events.js';

type HandledEvent = SettingsEvent | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set(['DeviceSettingsChanged', 'DeviceDeleted']);
const isHandled = eventGuard<HandledEvent>(HANDLED);

export class SettingsReadModel implements Projection {
  readonly name = 'device-settings';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<SettingsReadModel['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(
      'CREATE TABLE IF NOT EXISTS device_settings (device_id TEXT PRIMARY KEY, settings TEXT NOT NULL) WITHOUT ROWID',
    );
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM device_settings');
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    if (event.type === 'DeviceDeleted') {
      this.sql().remove.run(event.data.deviceId);
      return;
    }
    // The stream's own evolve: the rule is written once.
    const next = settingsDecider.evolve(this.get(event.data.deviceId), event);
    this.sql().put.run(event.data.deviceId, JSON.stringify(next));
  }

  /** The device's settings in full (credentials included): for the engines only. */
  get(deviceId: string): DeviceSettings {
    const row = this.sql().get.get(deviceId);
    return row ? { ...DEFAULT_SETTINGS, ...(JSON.parse(row.settings) as Partial<DeviceSettings>) } : DEFAULT_SETTINGS;
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      get: this.db.prepare<[string], { settings: string }>('SELECT settings FROM device_settings WHERE device_id = ?'),
      put: this.db.prepare<[string, string]>(
        'INSERT INTO device_settings (device_id, settings) VALUES (?, ?) ON CONFLICT (device_id) DO UPDATE SET settings = excluded.settings',
      ),
      remove: this.db.prepare<[string]>('DELETE FROM device_settings WHERE device_id = ?'),
    };
  }
}
