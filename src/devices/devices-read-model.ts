import type Database from 'better-sqlite3';
import type { DeviceKeyDirectory } from '../auth/authenticator.js';
import type { Engine } from '../config.js';
import { DEVICE_EVENT_TYPES, type DeviceEvent } from './device-events.js';
import { SESSION_EVENT_TYPES, type SessionError, type SessionEvent } from '../sessions/session-events.js';
import { lastErrorAfter, phoneAfter, retryAfter } from '../sessions/session-record.js';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { Projection } from '../projections/projection.js';

export interface DeviceView {
  id: string;
  name: string;
  engine: Engine;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  session: { state: string; phone?: string } & SessionDiagnostics;
}

/** Why a session is not online and when it tries again (docs/api-guide.md, "Sessions and the sandbox engine"). */
export interface SessionDiagnostics {
  lastError?: SessionError;
  attempt?: number;
  nextRetryAt?: string;
}

interface DeviceRow {
  id: string;
  name: string;
  engine: Engine;
  metadata: string;
  key_hash: string;
  created_at: string;
  updated_at: string;
  session_state: string;
  session_phone: string | null;
  session_since: string;
  session_error: string | null;
  session_attempt: number | null;
  session_retry_at: string | null;
}

export interface SessionView extends SessionDiagnostics {
  state: string;
  phone?: string;
  since: string;
}

const CACHE_SIZE = 10_000;
const HANDLED: ReadonlySet<string> = new Set([...DEVICE_EVENT_TYPES, ...SESSION_EVENT_TYPES]);
const isHandled = eventGuard<DeviceEvent | SessionEvent>(HANDLED);

export interface DevicePage {
  items: DeviceView[];
  /** The id of the last item when more may follow. */
  nextAfter: string | null;
}

/**
 * The devices read model: one row per live device, for the /devices routes and for key checks.
 * Deleted devices leave the table; their history stays in the store.
 */
export class DevicesReadModel implements Projection, DeviceKeyDirectory {
  readonly name = 'devices';
  // 2: reconnection attempt and next retry columns. 3: logged_out clears lastError.
  readonly version = 3;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<DevicesReadModel['prepare']> | undefined;
  /**
   * Rows recently read, by id: every authenticated device request reads its device, so this keeps SQLite and
   * JSON.parse off the hot path. apply() drops a device's entry before changing its row.
   */
  private readonly cache = new Map<string, DeviceRow>();
  /** Views of rows, by row: a changed device is a new row (apply() drops the old one), so a view never outlives its row. */
  private readonly views = new WeakMap<DeviceRow, DeviceView>();

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS devices (
        id            TEXT PRIMARY KEY,
        name          TEXT NOT NULL,
        engine        TEXT NOT NULL,
        metadata      TEXT NOT NULL,
        key_hash      TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL,
        session_state TEXT NOT NULL DEFAULT 'closed',
        session_phone TEXT,
        session_since TEXT NOT NULL,
        session_error TEXT,
        session_attempt INTEGER,
        session_retry_at TEXT
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS devices_by_key ON devices (key_hash);
      CREATE INDEX IF NOT EXISTS devices_by_state ON devices (session_state, id);
    `);
    // A table made by version 1 lacks the reconnection columns (version 2 rebuilds its rows, not its table).
    const columns = new Set(
      (db.prepare('PRAGMA table_info(devices)').all() as Array<{ name: string }>).map((column) => column.name),
    );
    if (!columns.has('session_attempt')) db.exec('ALTER TABLE devices ADD COLUMN session_attempt INTEGER');
    if (!columns.has('session_retry_at')) db.exec('ALTER TABLE devices ADD COLUMN session_retry_at TEXT');
  }

  /** Drops the cached view of a device whose row another process changed (src/projections/projector-link.ts). */
  forget(deviceId: string): void {
    this.cache.delete(deviceId);
  }

  reset(db: Database.Database): void {
    this.cache.clear();
    db.exec('DELETE FROM devices');
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    const sql = this.sql();
    const row = event.type === 'SessionStateChanged' ? this.row(event.data.deviceId) : undefined;
    this.cache.delete(event.data.deviceId);
    switch (event.type) {
      case 'DeviceCreated': {
        const at = event.data.at;
        const { deviceId, name, engine, metadata, keyHash } = event.data;
        sql.insert.run(deviceId, name, engine, JSON.stringify(metadata), keyHash, at, at, at);
        return;
      }
      case 'DeviceUpdated': {
        const { deviceId, name, metadata, at } = event.data;
        sql.update.run(name ?? null, metadata === undefined ? null : JSON.stringify(metadata), at, deviceId);
        return;
      }
      case 'DeviceKeyRotated':
        sql.rotate.run(event.data.keyHash, event.data.at, event.data.deviceId);
        return;
      case 'DeviceDeleted':
        sql.remove.run(event.data.deviceId);
        return;
      case 'SessionStateChanged': {
        if (!row) return;
        const { deviceId, state, phone, error } = event.data;
        const before = row.session_error ? (JSON.parse(row.session_error) as SessionError) : undefined;
        const lastError = lastErrorAfter(state, error, before);
        const newPhone = phoneAfter(state, phone, row.session_phone ?? undefined);
        const retry = retryAfter(event.data);
        // A failed try while reconnecting is no new state: `since` stays when reconnecting began.
        const since = state === event.data.previousState ? row.session_since : event.createdAt.toISOString();
        sql.session.run(
          state,
          newPhone ?? null,
          since,
          lastError ? JSON.stringify(lastError) : null,
          retry.attempt ?? null,
          retry.nextRetryAt ?? null,
          deviceId,
        );
        return;
      }
    }
  }

  /** Read on every device request: the view of a cached row is made once (frozen: every caller shares it). */
  get(deviceId: string): DeviceView | undefined {
    const row = this.row(deviceId);
    if (!row) return undefined;
    let view = this.views.get(row);
    if (!view) this.views.set(row, (view = frozen(toView(row))));
    return view;
  }

  /** Devices ordered by id, after the given id, optionally in one session state. */
  list(options: { limit: number; after?: string; state?: string }): DevicePage {
    const sql = this.sql();
    const after = options.after ?? '';
    const rows = options.state
      ? sql.pageInState.all(options.state, after, options.limit + 1)
      : sql.page.all(after, options.limit + 1);
    const items = rows.slice(0, options.limit).map(toView);
    return { items, nextAfter: rows.length > options.limit ? items[items.length - 1].id : null };
  }

  session(deviceId: string): SessionView | undefined {
    const row = this.row(deviceId);
    if (!row) return undefined;
    const { state, phone, ...diagnostics } = toView(row).session;
    return { state, ...(phone === undefined ? {} : { phone }), since: row.session_since, ...diagnostics };
  }

  /** Devices per session state, for the metrics gauge. */
  countByState(): Array<{ state: string; count: number }> {
    return this.sql().countByState.all();
  }

  /** The session state alone (what a send's answer carries), without making the session's view. */
  sessionState(deviceId: string): string | undefined {
    return this.row(deviceId)?.session_state;
  }

  keyHashOf(deviceId: string): string | undefined {
    return this.row(deviceId)?.key_hash;
  }

  isDeviceKeyHash(keyHash: string): boolean {
    return this.sql().byKey.get(keyHash) !== undefined;
  }

  deviceOfKeyHash(keyHash: string): string | undefined {
    return this.sql().byKey.get(keyHash)?.id;
  }

  private row(deviceId: string): DeviceRow | undefined {
    const cached = this.cache.get(deviceId);
    if (cached) return cached;
    const row = this.sql().byId.get(deviceId);
    if (row) {
      if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(deviceId, row);
    }
    return row;
  }

  /** Statements are prepared lazily: the table exists only after setup(). */
  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      insert: db.prepare(
        'INSERT OR REPLACE INTO devices (id, name, engine, metadata, key_hash, created_at, updated_at, session_since) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      update: db.prepare(
        'UPDATE devices SET name = coalesce(?, name), metadata = coalesce(?, metadata), updated_at = ? WHERE id = ?',
      ),
      rotate: db.prepare('UPDATE devices SET key_hash = ?, updated_at = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM devices WHERE id = ?'),
      session: db.prepare(
        'UPDATE devices SET session_state = ?, session_phone = ?, session_since = ?, session_error = ?, session_attempt = ?, session_retry_at = ? WHERE id = ?',
      ),
      byId: db.prepare<[string], DeviceRow>('SELECT * FROM devices WHERE id = ?'),
      countByState: db.prepare<[], { state: string; count: number }>(
        'SELECT session_state AS state, count(*) AS count FROM devices GROUP BY session_state',
      ),
      byKey: db.prepare<[string], { id: string }>('SELECT id FROM devices WHERE key_hash = ?'),
      page: db.prepare<[string, number], DeviceRow>('SELECT * FROM devices WHERE id > ? ORDER BY id LIMIT ?'),
      pageInState: db.prepare<[string, string, number], DeviceRow>(
        'SELECT * FROM devices WHERE session_state = ? AND id > ? ORDER BY id LIMIT ?',
      ),
    };
  }
}

function frozen(view: DeviceView): DeviceView {
  Object.freeze(view.session);
  return Object.freeze(view);
}

function toView(row: DeviceRow): DeviceView {
  return {
    id: row.id,
    name: row.name,
    engine: row.engine,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    session: {
      state: row.session_state,
      ...(row.session_phone ? { phone: row.session_phone } : {}),
      ...(row.session_error ? { lastError: JSON.parse(row.session_error) as SessionError } : {}),
      ...(row.session_attempt === null ? {} : { attempt: row.session_attempt }),
      ...(row.session_retry_at === null ? {} : { nextRetryAt: row.session_retry_at }),
    },
  };
}
