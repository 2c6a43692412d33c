/**
 * Scoped device keys (docs/api-guide.md, "Scoped keys"): one row per live key, by its hash, for the
 * authenticator and for `GET /devices/:deviceId/keys`. A device's keys go with the device.
 *
 * When each key was last used is no event (a write per request would be): it is kept in `key_usage`, by key
 * hash, written at most once a minute per key, and a rebuild of the read model leaves it alone.
 */
import type Database from 'better-sqlite3';
import { SCOPED_KEY_EVENT_TYPES } from './device-events.js';
import type { StoredEvent } from '../eventstore/event-store.js';
import type { Projection } from '../projections/projection.js';
import type { DeviceKeyCreatedData, DeviceKeyDeletedData } from './device-events.js';
import type { Scope } from '../auth/scopes.js';

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

/** `lastUsedAt` is written at most this often per key. */
export const KEY_USE_RESOLUTION_MS = 60_000;
const CACHE_SIZE = 10_000;
const HANDLED: ReadonlySet<string> = new Set([...SCOPED_KEY_EVENT_TYPES, 'DeviceDeleted']);

export class DeviceKeysReadModel implements Projection {
  readonly name = 'device-keys';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<DeviceKeysReadModel['prepare']> | undefined;
  /** Keys recently presented, by hash (apply() drops what it changes). */
  private readonly cache = new Map<string, ScopedKeyView>();
  /** When each key's use was last written (ms), by hash. */
  private readonly usageWritten = new Map<string, number>();

  constructor(private readonly db: Database.Database) {}

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
        return;
      }
      case 'DeviceKeyDeleted': {
        const { keyHash } = event.data as DeviceKeyDeletedData;
        this.cache.delete(keyHash);
        sql.remove.run(keyHash);
        return;
      }
      case 'DeviceDeleted': {
        const { deviceId } = event.data as { deviceId: string };
        for (const [hash, key] of this.cache) if (key.deviceId === deviceId) this.cache.delete(hash);
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

  /** A device's scoped keys, oldest first, with when each was last used. */
  list(deviceId: string): Array<ScopedKeyView & { lastUsedAt: string | null }> {
    return this.sql()
      .byDevice.all(deviceId)
      .map((row) => ({ ...toView(row), lastUsedAt: row.last_used_at }));
  }

  /** When the key with this hash was last used (to within KEY_USE_RESOLUTION_MS), or null. */
  lastUsedAt(keyHash: string): string | null {
    return this.sql().usage.get(keyHash)?.last_used_at ?? null;
  }

  /** Notes a use of a key (written when the last one written is older than KEY_USE_RESOLUTION_MS). */
  noteUse(keyHash: string, now: number): void {
    const written = this.usageWritten.get(keyHash);
    if (written !== undefined && now - written < KEY_USE_RESOLUTION_MS) return;
    if (this.usageWritten.size >= CACHE_SIZE) this.usageWritten.clear();
    this.usageWritten.set(keyHash, now);
    this.sql().use.run(keyHash, new Date(now).toISOString());
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
      byHash: db.prepare<[string], KeyRow>('SELECT * FROM device_keys WHERE key_hash = ?'),
      byDevice: db.prepare<[string], KeyRow & { last_used_at: string | null }>(
        'SELECT k.*, u.last_used_at FROM device_keys k LEFT JOIN key_usage u ON u.key_hash = k.key_hash WHERE k.device_id = ? ORDER BY k.created_at, k.key_id',
      ),
      usage: db.prepare<[string], { last_used_at: string }>('SELECT last_used_at FROM key_usage WHERE key_hash = ?'),
      use: db.prepare(
        'INSERT INTO key_usage (key_hash, last_used_at) VALUES (?, ?) ON CONFLICT (key_hash) DO UPDATE SET last_used_at = excluded.last_used_at',
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
