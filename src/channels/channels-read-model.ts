/**
 * The channels read model: per device, the channels the account owns, administers or follows, with its role
 * and whether it muted them; fed only from the channels stream (a rebuild from position 0 gives the same
 * table). The send path reads the role of a channel here (`403 not_channel_admin` for a subscriber).
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { Projection } from '../projections/projection.js';
import type { ChannelEvent, ChannelRole } from './channel-events.js';
import { channelLink } from './channel-id.js';

export interface ChannelView {
  channelId: string;
  name: string;
  description?: string;
  /** Absent: the account does not follow it (a channel resolved by its link). */
  role?: ChannelRole;
  subscribers?: number;
  muted: boolean;
  /** `https://whatsapp.com/channel/<code>`, when known. */
  inviteLink?: string;
}

type HandledEvent = ChannelEvent | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set([
  'ChannelRecorded',
  'ChannelUpdated',
  'ChannelUnfollowed',
  'DeviceDeleted',
]);
const isHandled = eventGuard<HandledEvent>(HANDLED);

interface ChannelRow {
  channel_id: string;
  name: string;
  description: string | null;
  role: string;
  muted: number;
  subscribers: number | null;
  invite_code: string | null;
}

export class ChannelsReadModel implements Projection {
  readonly name = 'channels';
  readonly version = 1;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<ChannelsReadModel['prepare']> | undefined;

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS channels (
        device_id   TEXT NOT NULL,
        channel_id  TEXT NOT NULL,
        name        TEXT NOT NULL,
        description TEXT,
        role        TEXT NOT NULL,
        muted       INTEGER NOT NULL,
        subscribers INTEGER,
        invite_code TEXT,
        PRIMARY KEY (device_id, channel_id)
      ) WITHOUT ROWID;
    `);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM channels;');
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    const sql = this.sql();
    switch (event.type) {
      case 'ChannelRecorded': {
        const { deviceId, channel } = event.data;
        sql.upsert.run({
          device_id: deviceId,
          channel_id: channel.channelId,
          name: channel.name,
          description: channel.description ?? null,
          role: channel.role,
          muted: Number(channel.muted === true),
          subscribers: channel.subscribers ?? null,
          invite_code: channel.inviteCode ?? null,
        });
        return;
      }
      case 'ChannelUpdated': {
        const { deviceId, channelId, name, description, muted, role } = event.data;
        sql.update.run({
          role: role ?? null,
          device_id: deviceId,
          channel_id: channelId,
          name: name ?? null,
          description: description ?? null,
          muted: muted === undefined ? null : Number(muted),
        });
        return;
      }
      case 'ChannelUnfollowed':
        sql.delete.run(event.data.deviceId, event.data.channelId);
        return;
      case 'DeviceDeleted':
        sql.deleteDevice.run(event.data.deviceId);
        return;
    }
  }

  list(deviceId: string): ChannelView[] {
    return this.sql().list.all(deviceId).map(viewOf);
  }

  get(deviceId: string, channelId: string): ChannelView | undefined {
    const row = this.sql().one.get(deviceId, channelId);
    return row && viewOf(row);
  }

  /** The account's role in the channel; undefined when it does not follow it. */
  roleOf(deviceId: string, channelId: string): ChannelRole | undefined {
    return this.sql().role.get(deviceId, channelId)?.role as ChannelRole | undefined;
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    const select =
      'SELECT channel_id, name, description, role, muted, subscribers, invite_code FROM channels WHERE device_id = ?';
    return {
      list: db.prepare<[string], ChannelRow>(`${select} ORDER BY channel_id`),
      one: db.prepare<[string, string], ChannelRow>(`${select} AND channel_id = ?`),
      role: db.prepare<[string, string], { role: string }>(
        'SELECT role FROM channels WHERE device_id = ? AND channel_id = ?',
      ),
      upsert: db.prepare(
        `INSERT INTO channels (device_id, channel_id, name, description, role, muted, subscribers, invite_code)
         VALUES (@device_id, @channel_id, @name, @description, @role, @muted, @subscribers, @invite_code)
         ON CONFLICT (device_id, channel_id) DO UPDATE SET name = excluded.name, description = excluded.description,
           role = excluded.role, muted = excluded.muted, subscribers = excluded.subscribers,
           invite_code = coalesce(excluded.invite_code, invite_code)`,
      ),
      update: db.prepare(
        `UPDATE channels SET name = coalesce(@name, name), description = coalesce(@description, description),
           muted = coalesce(@muted, muted), role = coalesce(@role, role)
         WHERE device_id = @device_id AND channel_id = @channel_id`,
      ),
      delete: db.prepare<[string, string]>('DELETE FROM channels WHERE device_id = ? AND channel_id = ?'),
      deleteDevice: db.prepare<[string]>('DELETE FROM channels WHERE device_id = ?'),
    };
  }
}

function viewOf(row: ChannelRow): ChannelView {
  return {
    channelId: row.channel_id,
    name: row.name,
    ...(row.description === null || row.description === '' ? {} : { description: row.description }),
    role: row.role as ChannelRole,
    ...(row.subscribers === null ? {} : { subscribers: row.subscribers }),
    muted: row.muted === 1,
    ...(row.invite_code === null ? {} : { inviteLink: channelLink(row.invite_code) }),
  };
}
