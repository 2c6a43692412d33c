/**
 * Scoped device keys (docs/api-guide.md, "Scoped keys"): one row per live key, by its hash, for the
 * authenticator and for `GET /devices/:deviceId/keys`. A device's keys go with the device.
 *
 * When each key was last used is no event (a write per request would be): it is kept in `key_usage`, by key
 * hash, noted at most once a minute per key and written in batches (src/devices/key-usage.ts), and a rebuild of
 * the read model leaves it alone.
 */
import type Database from 'better-sqlite3';
import { SCOPED_KEY_EVENT_TYPES } from './device-events.js';
import type { StoredEvent } from '../eventstore/event-store.js';
import type { Projection } from '../projections/projection.js';
import type { DeviceKeyCreatedData, DeviceKeyDeletedData } from './device-events.js';
import type { Scope } from '../auth/scopes.js';
import { type Clock, systemClock } from '../time/clock.js';
import { KeyUsage, type KeyUses } from './key-usage.js';

export interface ScopedKeyView {
  keyId: string;
  deviceId: string;
  name: string;
  scopes: Scope[];
  createdAt: string;
}

interface KeyRow {
  key_hash: string;
  device_id: string;
  key_id: string;
  name: string;
  scopes: string;
  created_at: string;
}

const CACHE_SIZE = 10_000;
const HANDLED: ReadonlySet<string> = new Set([...SCOPED_KEY_EVENT_TYPES, 'DeviceDeleted']);

export class DeviceKeysReadModel implements Projection {
  readonly name = 'device-keys';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<DeviceKeysReadModel['prepare']> | undefined;
  /** Keys recently presented, by hash (apply() drops what it changes; forget() what another process changed). */
  private readonly cache = new Map<string, ScopedKeyView>();
  /** Told (inside the batch) of each key hash whose row apply() changed: the machine projector tells the workers. */
  onChanged: (keyHash: string) => void = () => undefined;
  /** When each key was last used, written in batches into `key_usage`. */
  readonly usage: KeyUsage;

  constructor(
    private readonly db: Database.Database,
    clock: Clock = systemClock,
  ) {
    this.usage = new KeyUsage((uses) => this.writeUses(uses), clock);
  }

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS device_keys (
        key_hash   TEXT PRIMARY KEY,
        device_id  TEXT NOT NULL,
        key_id     TEXT NOT NULL,
        name       TEXT NOT NULL,
        scopes     TEXT NOT NULL,
        created_at TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE UNIQUE INDEX IF NOT EXISTS device_keys_by_device ON device_keys (device_id, key_id);
      CREATE TABLE IF NOT EXISTS key_usage (
        key_hash     TEXT PRIMARY KEY,
        last_used_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `);
  }

  reset(db: Database.Database): void {
    this.cache.clear();
    db.exec('DELETE FROM device_keys');
  }

  apply(event: StoredEvent): void {
    const sql = this.sql();
    switch (event.type) {
      case 'DeviceKeyCreated': {
        const { deviceId, keyId, name, scopes, keyHash, at } = event.data as DeviceKeyCreatedData;
        sql.insert.run(keyHash, deviceId, keyId, name, JSON.stringify(scopes), at);
        this.changed(keyHash);
        return;
      }
      case 'DeviceKeyDeleted': {
        const { keyHash } = event.data as DeviceKeyDeletedData;
        this.changed(keyHash);
        sql.remove.run(keyHash);
        return;
      }
      case 'DeviceDeleted': {
        const { deviceId } = event.data as { deviceId: string };
        for (const keyHash of sql.hashesOf.all(deviceId)) this.changed(keyHash);
        sql.removeDevice.run(deviceId);
        return;
      }
    }
  }

  /** The scoped key with this hash (any device's), or undefined. */
  byHash(keyHash: string): ScopedKeyView | undefined {
    const cached = this.cache.get(keyHash);
    if (cached) return cached;
    const row = this.sql().byHash.get(keyHash);
    if (!row) return undefined;
    const view = Object.freeze(toView(row));
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(keyHash, view);
    return view;
  }

  /** Drops the cached key with this hash, whose row another process changed (src/projections/projector-link.ts). */
  forget(keyHash: string): void {
    this.cache.delete(keyHash);
  }

  /** A device's scoped keys, oldest first, with when each was last used. */
  list(deviceId: string): Array<ScopedKeyView & { lastUsedAt: string | null }> {
    return this.sql()
      .byDevice.all(deviceId)
      .map((row) => ({ ...toView(row), lastUsedAt: this.lastUse(row.key_hash, row.last_used_at) }));
  }

  /** When the key with this hash was last used (to within KEY_USE_RESOLUTION_MS), or null. */
  lastUsedAt(keyHash: string): string | null {
    return this.lastUse(keyHash, this.sql().usage.get(keyHash)?.last_used_at ?? null);
  }

  /** Notes a use of a key: in memory, written with the others at the next flush (no write while authenticating). */
  noteUse(keyHash: string, now: number): void {
    this.usage.noteUse(keyHash, now);
  }

  /** The later of the use written and one noted here but not yet written. */
  private lastUse(keyHash: string, written: string | null): string | null {
    const unwritten = this.usage.unwritten(keyHash);
    if (unwritten === undefined) return written;
    return written !== null && Date.parse(written) >= unwritten ? written : new Date(unwritten).toISOString();
  }

  private changed(keyHash: string): void {
    this.cache.delete(keyHash);
    this.onChanged(keyHash);
  }

  /** Every use of a flush in one transaction. */
  private writeUses(uses: KeyUses): void {
    const use = this.sql().use;
    this.db.transaction(() => {
      for (const [keyHash, at] of uses) use.run(keyHash, new Date(at).toISOString());
    })();
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      insert: db.prepare(
        'INSERT OR REPLACE INTO device_keys (key_hash, device_id, key_id, name, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      remove: db.prepare('DELETE FROM device_keys WHERE key_hash = ?'),
      removeDevice: db.prepare('DELETE FROM device_keys WHERE device_id = ?'),
      hashesOf: db.prepare<[string], string>('SELECT key_hash FROM device_keys WHERE device_id = ?').pluck(),
      byHash: db.prepare<[string], KeyRow>('SELECT * FROM device_keys WHERE key_hash = ?'),
      byDevice: db.prepare<[string], KeyRow & { last_used_at: string | null }>(
        'SELECT k.*, u.last_used_at FROM device_keys k LEFT JOIN key_usage u ON u.key_hash = k.key_hash WHERE k.device_id = ? ORDER BY k.created_at, k.key_id',
      ),
      usage: db.prepare<[string], { last_used_at: string }>('SELECT last_used_at FROM key_usage WHERE key_hash = ?'),
      use: db.prepare(
        'INSERT INTO key_usage (key_hash, last_used_at) VALUES (?, ?) ON CONFLICT (key_hash) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)',
      ),
    };
  }
}

function toView(row: KeyRow): ScopedKeyView {
  return {
    keyId: row.key_id,
    deviceId: row.device_id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as Scope[],
    createdAt: row.created_at,
  };
}
