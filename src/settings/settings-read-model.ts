/**
 * Each device's settings, fed from its settings stream: read by the /settings routes (credentials
 * masked) and by the engines when they connect or a call rings (in full). With ENCRYPTION_KEY set, the
 * table holds proxy credentials sealed only (those an older event recorded in clear are sealed here);
 * they are opened when an engine asks.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { Projection } from '../projections/projection.js';
import { SealedText } from '../secrets/sealed-text.js';
import { openedProxy, sealedProxy } from './proxy-url.js';
import { settingsDecider } from './settings-decider.js';
import { DEFAULT_SETTINGS, type DeviceSettings, type SettingsEvent } from './settings-events.js';

type HandledEvent = SettingsEvent | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set(['DeviceSettingsChanged', 'DeviceDeleted']);
const isHandled = eventGuard<HandledEvent>(HANDLED);
/** Devices whose settings are kept in memory: read on every send (pacing), they change rarely. */
const CACHE_SIZE = 10_000;

export class SettingsReadModel implements Projection {
  readonly name = 'device-settings';
  /** 2: proxy credentials sealed when ENCRYPTION_KEY is set, also those recorded in clear before. */
  readonly version = 2;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<SettingsReadModel['prepare']> | undefined;
  /** What `recorded` answered, by device (frozen: callers share it); dropped when the device's row changes. */
  private readonly cache = new Map<string, Readonly<DeviceSettings>>();

  /** `sealed`: ENCRYPTION_KEY's sealing (none: credentials are kept as they were recorded). */
  constructor(
    private readonly db: Database.Database,
    private readonly sealed: SealedText = new SealedText(undefined),
  ) {}

  setup(db: Database.Database): void {
    db.exec(
      'CREATE TABLE IF NOT EXISTS device_settings (device_id TEXT PRIMARY KEY, settings TEXT NOT NULL) WITHOUT ROWID',
    );
  }

  /** Drops the cached settings of a device whose row another process changed (src/projections/projector-link.ts). */
  forget(deviceId: string): void {
    this.cache.delete(deviceId);
  }

  reset(db: Database.Database): void {
    this.cache.clear();
    // Rows of version 1 may hold credentials in clear: their bytes are overwritten, not just freed.
    const secureDelete = db.pragma('secure_delete', { simple: true }) as number;
    db.pragma('secure_delete = ON');
    db.exec('DELETE FROM device_settings');
    db.pragma(`secure_delete = ${secureDelete}`);
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    this.cache.delete(event.data.deviceId);
    if (event.type === 'DeviceDeleted') {
      this.sql().remove.run(event.data.deviceId);
      return;
    }
    // The stream's own evolve: the rule is written once.
    const { deviceId } = event.data;
    const next = settingsDecider.evolve(this.read(deviceId), event);
    if (next.proxy) next.proxy = sealedProxy(next.proxy, deviceId, this.sealed);
    this.sql().put.run(deviceId, JSON.stringify(next));
  }

  /** The device's settings in full (credentials opened): for the engines only. */
  get(deviceId: string): DeviceSettings {
    const settings = this.recorded(deviceId);
    return settings.proxy ? { ...settings, proxy: openedProxy(settings.proxy, deviceId, this.sealed) } : settings;
  }

  /** The device's settings as kept (credentials sealed when ENCRYPTION_KEY is set): the proxy's `url` is masked. */
  recorded(deviceId: string): DeviceSettings {
    const cached = this.cache.get(deviceId);
    if (cached) return cached;
    const settings = Object.freeze(this.read(deviceId));
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(deviceId, settings);
    return settings;
  }

  /** The row as it is in the file (a copy the caller may change). */
  private read(deviceId: string): DeviceSettings {
    const row = this.sql().get.get(deviceId);
    return { ...DEFAULT_SETTINGS, ...(row ? (JSON.parse(row.settings) as Partial<DeviceSettings>) : {}) };
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
