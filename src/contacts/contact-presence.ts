/**
 * Presence of contacts (API Part 3): POST /contacts/:number/presence subscribes to a contact's presence on the
 * live connection (Baileys `presenceSubscribe`); what the network then reports arrives as PresenceUpdated on the
 * inbox stream (`presence.update`). The contact-presence read model keeps, per device and contact, the last
 * state seen and the last time the contact was seen online, for GET /contacts/:number/presence.
 */
import type Database from 'better-sqlite3';
import type { EngineConnection } from '../engines/engine.js';
import { engineSupports, translatingEngineFailures } from '../engines/engine-failure.js';
import { sessionNotOnline } from '../errors/domain-error.js';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { PresenceUpdatedData } from '../inbox/inbox-events.js';
import { isGroupId } from '../messages/chat-id.js';
import type { Projection } from '../projections/projection.js';

export interface ContactPresence {
  state: 'available' | 'unavailable' | 'unknown';
  /** ISO 8601, when known. */
  lastSeen: string | null;
}

export interface PresenceSubscriptionsDeps {
  /** The live connection while the device's session is online. */
  connection: (deviceId: string) => EngineConnection | undefined;
  sessionState?: (deviceId: string) => string | undefined;
}

export class PresenceSubscriptions {
  constructor(private readonly deps: PresenceSubscriptionsDeps) {}

  /** Asks the network for the contact's presence changes (they arrive as `presence.update`). */
  async subscribe(deviceId: string, number: string): Promise<void> {
    const connection = this.deps.connection(deviceId);
    const sessionState = () => this.deps.sessionState?.(deviceId);
    if (!connection) throw sessionNotOnline(sessionState());
    const translated = translatingEngineFailures(connection, sessionState);
    await engineSupports(translated.subscribePresence?.bind(translated), 'presence subscriptions')(number);
  }
}

type HandledEvent =
  { type: 'PresenceUpdated'; data: PresenceUpdatedData } | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set(['PresenceUpdated', 'DeviceDeleted']);
const isHandled = eventGuard<HandledEvent>(HANDLED);

export class ContactPresenceReadModel implements Projection {
  readonly name = 'contact-presence';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<ContactPresenceReadModel['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS contact_presence (
        device_id TEXT NOT NULL,
        number    TEXT NOT NULL,
        state     TEXT NOT NULL,
        last_seen TEXT,
        PRIMARY KEY (device_id, number)
      ) WITHOUT ROWID;
    `);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM contact_presence;');
  }

  apply(stored: StoredEvent): void {
    if (!isHandled(stored)) return;
    const sql = this.sql();
    if (stored.type === 'DeviceDeleted') {
      sql.removeDevice.run(stored.data.deviceId);
      return;
    }
    const { deviceId, from, state, lastSeen, chatId } = stored.data;
    // Typing in a group says the member is there, but the contact's own presence is its direct chat's.
    if (isGroupId(chatId)) return;
    const online = state !== 'unavailable';
    // Seen online now; gone offline: then (or when the network says), as far as the gateway knows.
    const seen = lastSeen ?? (online ? null : stored.createdAt.toISOString());
    sql.put.run({
      device_id: deviceId,
      number: from,
      state: online ? 'available' : 'unavailable',
      last_seen: seen,
    });
  }

  get(deviceId: string, number: string): ContactPresence {
    const row = this.sql().get.get(deviceId, number);
    if (!row) return { state: 'unknown', lastSeen: null };
    return { state: row.state as ContactPresence['state'], lastSeen: row.last_seen };
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    return {
      put: db.prepare(
        `INSERT INTO contact_presence (device_id, number, state, last_seen) VALUES (@device_id, @number, @state, @last_seen)
         ON CONFLICT (device_id, number) DO UPDATE SET state = excluded.state,
           last_seen = coalesce(excluded.last_seen, contact_presence.last_seen)`,
      ),
      get: db.prepare<[string, string], { state: string; last_seen: string | null }>(
        'SELECT state, last_seen FROM contact_presence WHERE device_id = ? AND number = ?',
      ),
      removeDevice: db.prepare<[string]>('DELETE FROM contact_presence WHERE device_id = ?'),
    };
  }
}
