/**
 * Each device's session health as the watchdog last judged it (GET /session/state `health`, the
 * dmg_sessions_silent gauge), fed from the health streams; and which devices wait to hear something after a send
 * (session-waits.ts), which the watchdog takes up again when it starts.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { Projection } from '../projections/projection.js';
import type { HealthEvent, SessionHealth } from './health-events.js';
import { WAIT_EVENT_TYPES, isHeard, isSendGoneOut } from './session-waits.js';

type HandledEvent = HealthEvent | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HEALTH_TYPES: ReadonlySet<string> = new Set(['SessionHealthChanged', 'DeviceDeleted']);
const isHandled = eventGuard<HandledEvent>(HEALTH_TYPES);
const HANDLED: ReadonlySet<string> = new Set([...HEALTH_TYPES, ...WAIT_EVENT_TYPES]);

export class HealthReadModel implements Projection {
  readonly name = 'session-health';
  /** 2: the devices waiting after a send (`session_waits`). */
  readonly version = 2;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<HealthReadModel['prepare']> | undefined;
  /** Whether each device waits after the batch so far: written once per device at flush (a rebuild's batch is large). */
  private readonly waits = new Map<string, boolean>();

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(
      'CREATE TABLE IF NOT EXISTS session_health (device_id TEXT PRIMARY KEY, health TEXT NOT NULL, since TEXT NOT NULL) WITHOUT ROWID',
    );
    db.exec('CREATE TABLE IF NOT EXISTS session_waits (device_id TEXT PRIMARY KEY) WITHOUT ROWID');
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM session_health');
    db.exec('DELETE FROM session_waits');
  }

  apply(event: StoredEvent): void {
    const deviceId = (event.data as { deviceId?: unknown } | null)?.deviceId;
    if (typeof deviceId === 'string') {
      if (isSendGoneOut(event)) this.waits.set(deviceId, true);
      else if (isHeard(event)) this.waits.set(deviceId, false);
    }
    if (!isHandled(event)) return;
    if (event.type === 'DeviceDeleted') {
      this.sql().remove.run(event.data.deviceId);
      this.waits.set(event.data.deviceId, false);
      return;
    }
    this.sql().put.run(event.data.deviceId, event.data.health, event.createdAt.toISOString());
  }

  flush(): void {
    // A second send while one waits, or a receipt when none does, leaves the row as it is (no page written).
    for (const [deviceId, waits] of this.waits) (waits ? this.sql().wait : this.sql().heard).run(deviceId);
    this.waits.clear();
  }

  discard(): void {
    this.waits.clear();
  }

  /** The devices waiting to hear something after a send (the watchdog's start takes their waits up again). */
  waitingDevices(): string[] {
    return this.sql()
      .waiting.all()
      .map((row) => row.device_id);
  }

  /** `ok` unless the watchdog found the session silent. */
  health(deviceId: string): SessionHealth {
    return this.sql().get.get(deviceId)?.health ?? 'ok';
  }

  /** The devices recorded silent (the watchdog's start: it follows their changes from there). */
  silentDevices(): string[] {
    return this.sql()
      .silentDevices.all()
      .map((row) => row.device_id);
  }

  silentCount(): number {
    return this.sql().silent.get()?.n ?? 0;
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    return {
      get: this.db.prepare<[string], { health: SessionHealth }>(
        'SELECT health FROM session_health WHERE device_id = ?',
      ),
      silentDevices: this.db.prepare<[], { device_id: string }>(
        "SELECT device_id FROM session_health WHERE health = 'silent'",
      ),
      silent: this.db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM session_health WHERE health = 'silent'"),
      put: this.db.prepare<[string, string, string]>(
        'INSERT INTO session_health (device_id, health, since) VALUES (?, ?, ?) ON CONFLICT (device_id) DO UPDATE SET health = excluded.health, since = excluded.since',
      ),
      remove: this.db.prepare<[string]>('DELETE FROM session_health WHERE device_id = ?'),
      wait: this.db.prepare<[string]>('INSERT OR IGNORE INTO session_waits (device_id) VALUES (?)'),
      heard: this.db.prepare<[string]>('DELETE FROM session_waits WHERE device_id = ?'),
      waiting: this.db.prepare<[], { device_id: string }>('SELECT device_id FROM session_waits'),
    };
  }
}
