/**
 * The contacts read model: per device, every number the account has as a contact (the engine's contact
 * events), every number that wrote to the device (MessageReceived, with the sender's push name) and
 * every number the device wrote to (OutboxMessageQueued). Fed only from the log, so a rebuild from
 * position 0 gives the same table. A deleted device's contacts leave with it, and events of it that
 * arrive after its deletion are ignored (device ids are never reused).
 */
import type Database from 'better-sqlite3';
import type { DeviceEvent } from '../devices/device-events.js';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { MessageReceivedData } from '../inbox/inbox-events.js';
import type { OutboxMessageQueuedData } from '../outbox/stream/outbox-events.js';
import { BulkInsert } from '../projections/bulk-insert.js';
import type { Projection } from '../projections/projection.js';
import type { ContactEvent } from './contact-events.js';
import { fold, isNumber, jidOfNumber, searchTerms } from './contact-text.js';

export interface ContactView {
  number: string;
  jid: string;
  /** The name in the account's address book (or a business's verified name). */
  name?: string;
  /** The name the person gave themselves. */
  pushName?: string;
}

export interface ContactPage {
  items: ContactView[];
  /** The number of the last item when more may follow. */
  nextAfter: string | null;
}

interface ContactRow {
  number: string;
  jid: string;
  name: string | null;
  push_name: string | null;
}

const HANDLED: ReadonlySet<string> = new Set([
  'ContactsUpdated',
  'MessageReceived',
  'OutboxMessageQueued',
  'DeviceDeleted',
]);
const isHandled = eventGuard<HandledEvent>(HANDLED);

/**
 * What a batch says about one contact, merged in memory and written once at its end: the last jid a
 * contact update gave (or the jid to insert with), and the last name and push name given (a name that is
 * not given leaves the known one).
 */
interface ContactChange {
  deviceId: string;
  number: string;
  jid: string;
  /** A contact update named the jid: it replaces the stored one. */
  setsJid: boolean;
  name: string | null;
  nameFolded: string | null;
  pushName: string | null;
  pushNameFolded: string | null;
}

const CONTACT_COLUMNS = ['device_id', 'number', 'jid', 'name', 'name_folded', 'push_name', 'push_name_folded'];
/** A name that is not given leaves the known one: WhatsApp's contact updates are partial. */
const KEEP_NAMES = `name = coalesce(excluded.name, name), name_folded = coalesce(excluded.name_folded, name_folded),
  push_name = coalesce(excluded.push_name, push_name), push_name_folded = coalesce(excluded.push_name_folded, push_name_folded)`;

type HandledEvent =
  | ContactEvent
  | { type: 'MessageReceived'; data: MessageReceivedData }
  | { type: 'OutboxMessageQueued'; data: OutboxMessageQueuedData }
  | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;

export class ContactsReadModel implements Projection {
  readonly name = 'contacts';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<ContactsReadModel['prepare']> | undefined;
  /** The deleted devices' table, kept in memory too: every message event asks it, and a rebuild meets millions. */
  private readonly deleted = new Set<string>();
  /** The batch's changes by device and number, written by flush(). */
  private changes = new Map<string, ContactChange>();
  private readonly upserts: { withJid: BulkInsert; keepingJid: BulkInsert };

  constructor(private readonly db: Database.Database) {
    this.upserts = {
      withJid: new BulkInsert(db, 'INSERT INTO contacts', CONTACT_COLUMNS, {
        suffix: `ON CONFLICT (device_id, number) DO UPDATE SET jid = excluded.jid, ${KEEP_NAMES}`,
        keyColumns: 2,
      }),
      // A number seen again with nothing new leaves its row unwritten.
      keepingJid: new BulkInsert(db, 'INSERT INTO contacts', CONTACT_COLUMNS, {
        suffix: `ON CONFLICT (device_id, number) DO UPDATE SET ${KEEP_NAMES}
          WHERE coalesce(excluded.name, name) IS NOT name OR coalesce(excluded.push_name, push_name) IS NOT push_name`,
        keyColumns: 2,
      }),
    };
  }

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS contacts (
        device_id        TEXT NOT NULL,
        number           TEXT NOT NULL,
        jid              TEXT NOT NULL,
        name             TEXT,
        name_folded      TEXT,
        push_name        TEXT,
        push_name_folded TEXT,
        PRIMARY KEY (device_id, number)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS contacts_deleted_devices (device_id TEXT PRIMARY KEY) WITHOUT ROWID;
    `);
    this.deleted.clear();
    for (const { device_id } of db
      .prepare<[], { device_id: string }>('SELECT device_id FROM contacts_deleted_devices')
      .all())
      this.deleted.add(device_id);
  }

  reset(db: Database.Database): void {
    this.discard();
    db.exec('DELETE FROM contacts; DELETE FROM contacts_deleted_devices;');
    this.deleted.clear();
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    const deviceId = event.data.deviceId;
    if (this.deleted.has(deviceId)) return;
    switch (event.type) {
      case 'ContactsUpdated':
        for (const contact of event.data.contacts) {
          if (!isNumber(contact.number)) continue;
          const { name, pushName } = contact;
          const change = this.change(deviceId, contact.number, contact.jid);
          change.jid = contact.jid;
          change.setsJid = true;
          if (name) {
            change.name = name;
            change.nameFolded = fold(name);
          }
          if (pushName) {
            change.pushName = pushName;
            change.pushNameFolded = fold(pushName);
          }
        }
        return;
      case 'MessageReceived': {
        const { from, pushName } = event.data;
        if (!isNumber(from)) return;
        const change = this.change(deviceId, from, undefined);
        if (pushName && pushName !== change.pushName) {
          change.pushName = pushName;
          change.pushNameFolded = fold(pushName);
        }
        return;
      }
      case 'OutboxMessageQueued':
        if (isNumber(event.data.to)) this.change(deviceId, event.data.to, undefined);
        return;
      case 'DeviceDeleted': {
        // What the batch held for the device goes with it.
        for (const [key, change] of this.changes) if (change.deviceId === deviceId) this.changes.delete(key);
        const sql = this.sql();
        sql.removeDevice.run(deviceId);
        sql.markDeleted.run(deviceId);
        this.deleted.add(deviceId);
        return;
      }
    }
  }

  flush(): void {
    if (this.changes.size === 0) return;
    const { withJid, keepingJid } = this.upserts;
    for (const c of this.changes.values()) {
      (c.setsJid ? withJid : keepingJid).add(
        c.deviceId,
        c.number,
        c.jid,
        c.name,
        c.nameFolded,
        c.pushName,
        c.pushNameFolded,
      );
    }
    this.changes = new Map();
    withJid.flush();
    keepingJid.flush();
  }

  discard(): void {
    this.changes = new Map();
    this.upserts.withJid.discard();
    this.upserts.keepingJid.discard();
  }

  /** The batch's change of a number; `jid`: the one a new row is inserted with (by default the number's). */
  private change(deviceId: string, number: string, jid: string | undefined): ContactChange {
    const key = `${deviceId}\u0000${number}`;
    let change = this.changes.get(key);
    if (!change) {
      change = {
        deviceId,
        number,
        jid: jid ?? jidOfNumber(number),
        setsJid: false,
        name: null,
        nameFolded: null,
        pushName: null,
        pushNameFolded: null,
      };
      this.changes.set(key, change);
    }
    return change;
  }

  get(deviceId: string, number: string): ContactView | undefined {
    const row = this.sql().byNumber.get(deviceId, number);
    return row && toView(row);
  }

  /** A device's contacts ordered by number, after the given number; `q` matches numbers and names. */
  list(deviceId: string, options: { limit: number; after?: string; q?: string }): ContactPage {
    const sql = this.sql();
    const after = options.after ?? '';
    const terms = options.q === undefined ? undefined : searchTerms(options.q);
    const rows =
      terms && terms.text !== ''
        ? sql.search.all(deviceId, after, terms.digits ?? terms.text, terms.text, terms.text, options.limit + 1)
        : sql.page.all(deviceId, after, options.limit + 1);
    const items = rows.slice(0, options.limit).map(toView);
    return { items, nextAfter: rows.length > options.limit ? items[items.length - 1].number : null };
  }

  /** Statements are prepared lazily: the tables exist only after setup(). */
  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    const columns = 'number, jid, name, push_name';
    return {
      removeDevice: db.prepare('DELETE FROM contacts WHERE device_id = ?'),
      markDeleted: db.prepare('INSERT OR IGNORE INTO contacts_deleted_devices (device_id) VALUES (?)'),
      byNumber: db.prepare<[string, string], ContactRow>(
        `SELECT ${columns} FROM contacts WHERE device_id = ? AND number = ?`,
      ),
      page: db.prepare<[string, string, number], ContactRow>(
        `SELECT ${columns} FROM contacts WHERE device_id = ? AND number > ? ORDER BY number LIMIT ?`,
      ),
      search: db.prepare<[string, string, string, string, string, number], ContactRow>(
        `SELECT ${columns} FROM contacts
         WHERE device_id = ? AND number > ?
           AND (instr(number, ?) > 0 OR instr(name_folded, ?) > 0 OR instr(push_name_folded, ?) > 0)
         ORDER BY number LIMIT ?`,
      ),
    };
  }
}

function toView(row: ContactRow): ContactView {
  return {
    number: row.number,
    jid: row.jid,
    ...(row.name === null ? {} : { name: row.name }),
    ...(row.push_name === null ? {} : { pushName: row.push_name }),
  };
}
