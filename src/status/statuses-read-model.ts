/**
 * The statuses read model: per device, the statuses it posted (OutboxMessageQueued to `status@broadcast`,
 * until deleted, cancelled, failed or expired) and who viewed each (StatusViewed, from read receipts). Fed
 * only from the log; GET /status reads it.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { StatusViewedData } from '../inbox/inbox-events.js';
import type { MessageStatusChangedData } from '../messages/message-events.js';
import type { OutboxMessageQueuedData } from '../outbox/stream/outbox-events.js';
import type { Projection } from '../projections/projection.js';
import { isStatusChat } from './status-chat.js';

export interface StatusView {
  waMessageId: string;
  type: string;
  text?: string;
  /** ISO 8601: when it was posted. */
  timestamp: string;
  viewers: Array<{ number: string; at: string }>;
}

type HandledEvent =
  | { type: 'OutboxMessageQueued'; data: OutboxMessageQueuedData }
  | { type: 'MessageStatusChanged'; data: MessageStatusChangedData }
  | { type: 'StatusViewed'; data: StatusViewedData }
  | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set([
  'OutboxMessageQueued',
  'MessageStatusChanged',
  'StatusViewed',
  'DeviceDeleted',
]);
const isHandled = eventGuard<HandledEvent>(HANDLED);

/** Statuses that end one: it is no longer shown. */
const GONE: ReadonlySet<string> = new Set(['deleted', 'cancelled', 'failed', 'expired']);

/** How long WhatsApp shows a status. */
const STATUS_LIFETIME_MS = 24 * 60 * 60 * 1000;

export class StatusesReadModel implements Projection {
  readonly name = 'statuses';
  /** 2: statuses older than a day (their lifetime) are removed when the device posts its next one. */
  readonly version = 2;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<StatusesReadModel['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS statuses (
        device_id     TEXT NOT NULL,
        wa_message_id TEXT NOT NULL,
        type          TEXT NOT NULL,
        text          TEXT,
        posted_at     TEXT NOT NULL,
        PRIMARY KEY (device_id, wa_message_id)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS statuses_by_time ON statuses (device_id, posted_at);
      CREATE TABLE IF NOT EXISTS status_viewers (
        device_id     TEXT NOT NULL,
        wa_message_id TEXT NOT NULL,
        number        TEXT NOT NULL,
        at            TEXT NOT NULL,
        PRIMARY KEY (device_id, wa_message_id, number)
      ) WITHOUT ROWID;
    `);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM statuses; DELETE FROM status_viewers;');
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    const sql = this.sql();
    switch (event.type) {
      case 'OutboxMessageQueued': {
        const d = event.data;
        if (!isStatusChat(d.to)) return;
        const inner = d.content.kind === 'forward' ? d.content.content : d.content;
        const text = inner.kind === 'text' ? inner.text : 'caption' in inner ? (inner.caption ?? null) : null;
        // A status lives a day: those gone by the time this one is posted leave (by the log's times, so a rebuild agrees).
        const expired = new Date(Date.parse(d.createdAt) - STATUS_LIFETIME_MS).toISOString();
        sql.expireViewers.run(d.deviceId, d.deviceId, expired);
        sql.expire.run(d.deviceId, expired);
        sql.put.run(d.deviceId, d.waMessageId, inner.kind, text, d.createdAt);
        return;
      }
      case 'MessageStatusChanged':
        if (GONE.has(event.data.status)) {
          sql.remove.run(event.data.deviceId, event.data.waMessageId);
          sql.removeViewers.run(event.data.deviceId, event.data.waMessageId);
        }
        return;
      case 'StatusViewed': {
        const { deviceId, waMessageId, viewer, timestamp } = event.data;
        if (!sql.exists.get(deviceId, waMessageId)) return;
        sql.view.run(deviceId, waMessageId, viewer, new Date(timestamp * 1000).toISOString());
        return;
      }
      case 'DeviceDeleted':
        sql.removeDevice.run(event.data.deviceId);
        sql.removeDeviceViewers.run(event.data.deviceId);
        return;
    }
  }

  /** Whether `waMessageId` is a status this device posted (and still shows). */
  isStatus(deviceId: string, waMessageId: string): boolean {
    return this.sql().exists.get(deviceId, waMessageId) !== undefined;
  }

  /** The device's statuses posted since `since` (ISO 8601), newest first, with their viewers. */
  list(deviceId: string, since: string): StatusView[] {
    const sql = this.sql();
    // Every status's viewers in one query, not one per status.
    const viewers = new Map<string, Array<{ number: string; at: string }>>();
    for (const { wa_message_id: id, number, at } of sql.viewers.all(deviceId, deviceId, since)) {
      const list = viewers.get(id);
      if (list) list.push({ number, at });
      else viewers.set(id, [{ number, at }]);
    }
    return sql.list.all(deviceId, since).map((row) => ({
      waMessageId: row.wa_message_id,
      type: row.type,
      ...(row.text === null ? {} : { text: row.text }),
      timestamp: row.posted_at,
      viewers: viewers.get(row.wa_message_id) ?? [],
    }));
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      put: db.prepare<[string, string, string, string | null, string]>(
        'INSERT OR IGNORE INTO statuses (device_id, wa_message_id, type, text, posted_at) VALUES (?, ?, ?, ?, ?)',
      ),
      remove: db.prepare<[string, string]>('DELETE FROM statuses WHERE device_id = ? AND wa_message_id = ?'),
      removeViewers: db.prepare<[string, string]>(
        'DELETE FROM status_viewers WHERE device_id = ? AND wa_message_id = ?',
      ),
      exists: db.prepare<[string, string], { one: number }>(
        'SELECT 1 AS one FROM statuses WHERE device_id = ? AND wa_message_id = ?',
      ),
      view: db.prepare<[string, string, string, string]>(
        'INSERT OR IGNORE INTO status_viewers (device_id, wa_message_id, number, at) VALUES (?, ?, ?, ?)',
      ),
      list: db.prepare<
        [string, string],
        { wa_message_id: string; type: string; text: string | null; posted_at: string }
      >(
        'SELECT wa_message_id, type, text, posted_at FROM statuses WHERE device_id = ? AND posted_at >= ? ORDER BY posted_at DESC, wa_message_id',
      ),
      viewers: db.prepare<[string, string, string], { wa_message_id: string; number: string; at: string }>(
        `SELECT wa_message_id, number, at FROM status_viewers WHERE device_id = ? AND wa_message_id IN
           (SELECT wa_message_id FROM statuses WHERE device_id = ? AND posted_at >= ?) ORDER BY at, number`,
      ),
      expire: db.prepare<[string, string]>('DELETE FROM statuses WHERE device_id = ? AND posted_at < ?'),
      expireViewers: db.prepare<[string, string, string]>(
        `DELETE FROM status_viewers WHERE device_id = ? AND wa_message_id IN
           (SELECT wa_message_id FROM statuses WHERE device_id = ? AND posted_at < ?)`,
      ),
      removeDevice: db.prepare<[string]>('DELETE FROM statuses WHERE device_id = ?'),
      removeDeviceViewers: db.prepare<[string]>('DELETE FROM status_viewers WHERE device_id = ?'),
    };
  }
}
