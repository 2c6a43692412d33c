/**
 * The groups read model: per device, the groups the account is in, their settings, size and participants,
 * fed only from the groups stream (a rebuild from position 0 gives the same tables). Listing a device's
 * groups is one indexed query, whatever their number; the device's own role comes from the participants
 * table by the account's number, so it follows every change of roles.
 */
import type Database from 'better-sqlite3';
import type { StoredEvent } from '../eventstore/event-store.js';
import { eventGuard } from '../eventstore/typed-events.js';
import type { DeviceEvent } from '../devices/device-events.js';
import type { Projection } from '../projections/projection.js';
import { type GroupEvent, type GroupMetadata, type GroupParticipant, type GroupRole } from './group-events.js';

export interface GroupSummary {
  groupId: string;
  subject: string;
  description?: string;
  size: number;
  isAdmin: boolean;
  announce: boolean;
  locked: boolean;
  /** Disappearing messages, seconds (0: off). */
  ephemeral: number;
  joinApproval: boolean;
  membersCanAdd: boolean;
}

export interface GroupDetail extends GroupSummary {
  participants: GroupParticipant[];
}

type HandledEvent = GroupEvent | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;
const HANDLED: ReadonlySet<string> = new Set([
  'GroupMetadataRecorded',
  'GroupUpdated',
  'GroupParticipantsChanged',
  'GroupLeft',
  'DeviceDeleted',
]);
const isHandled = eventGuard<HandledEvent>(HANDLED);

interface GroupRow {
  group_id: string;
  subject: string;
  description: string | null;
  announce: number;
  locked: number;
  size: number;
  my_role: string | null;
  ephemeral: number;
  join_approval: number;
  members_can_add: number;
}

/** Devices whose list is kept in memory. */
const LISTS_KEPT = 1_000;

const ROLE_ORDER: Record<GroupRole, number> = { superadmin: 0, admin: 1, member: 2 };

export class GroupsReadModel implements Projection {
  readonly name = 'groups';
  readonly version = 2;
  readonly handles: ReadonlySet<string> = HANDLED;
  private statements: ReturnType<GroupsReadModel['prepare']> | undefined;
  /**
   * Each device's list as last read, until an event of that device changes its groups: a device in
   * hundreds of groups is listed without reading them again (reads and the projection share this one
   * synchronous connection, so a list is never read from an uncommitted batch).
   */
  private readonly lists = new Map<string, { me: string | undefined; items: GroupSummary[] }>();

  constructor(private readonly db: Database.Database) {}

  setup(db: Database.Database): void {
    db.exec(`
      CREATE TABLE IF NOT EXISTS groups (
        device_id   TEXT NOT NULL,
        group_id    TEXT NOT NULL,
        subject     TEXT NOT NULL,
        description TEXT,
        announce    INTEGER NOT NULL,
        locked      INTEGER NOT NULL,
        size        INTEGER NOT NULL,
        PRIMARY KEY (device_id, group_id)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS group_participants (
        device_id TEXT NOT NULL,
        group_id  TEXT NOT NULL,
        number    TEXT NOT NULL,
        role      TEXT NOT NULL,
        PRIMARY KEY (device_id, group_id, number)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS group_settings (
        device_id       TEXT NOT NULL,
        group_id        TEXT NOT NULL,
        ephemeral       INTEGER NOT NULL,
        join_approval   INTEGER NOT NULL,
        members_can_add INTEGER NOT NULL,
        PRIMARY KEY (device_id, group_id)
      ) WITHOUT ROWID;
    `);
  }

  /** Drops the cached list of a device whose rows another process changed (src/projections/projector-link.ts). */
  forget(deviceId: string): void {
    this.lists.delete(deviceId);
  }

  reset(db: Database.Database): void {
    db.exec('DELETE FROM groups; DELETE FROM group_participants; DELETE FROM group_settings;');
    this.lists.clear();
  }

  apply(event: StoredEvent): void {
    if (!isHandled(event)) return;
    this.lists.delete(event.data.deviceId);
    const sql = this.sql();
    switch (event.type) {
      case 'GroupMetadataRecorded':
        this.put(event.data.deviceId, event.data.group);
        return;
      case 'GroupUpdated': {
        const { deviceId, groupId, subject, description, announce, locked } = event.data;
        sql.update.run({
          device_id: deviceId,
          group_id: groupId,
          subject: subject ?? null,
          description: description ?? null,
          announce: announce === undefined ? null : Number(announce),
          locked: locked === undefined ? null : Number(locked),
        });
        const { ephemeral, joinApproval, membersCanAdd } = event.data;
        if (ephemeral !== undefined || joinApproval !== undefined || membersCanAdd !== undefined) {
          if (!sql.exists.get(deviceId, groupId)) return;
          sql.ensureSettings.run(deviceId, groupId);
          sql.updateSettings.run({
            device_id: deviceId,
            group_id: groupId,
            ephemeral: ephemeral ?? null,
            join_approval: joinApproval === undefined ? null : Number(joinApproval),
            members_can_add: membersCanAdd === undefined ? null : Number(membersCanAdd),
          });
        }
        return;
      }
      case 'GroupParticipantsChanged': {
        const { deviceId, groupId, action, participants } = event.data;
        if (!sql.exists.get(deviceId, groupId)) return;
        for (const number of participants) {
          if (action === 'add') sql.addParticipant.run(deviceId, groupId, number, 'member');
          else if (action === 'remove') sql.removeParticipant.run(deviceId, groupId, number);
          else sql.setRole.run(action === 'promote' ? 'admin' : 'member', deviceId, groupId, number);
        }
        sql.resize.run(deviceId, groupId);
        return;
      }
      case 'GroupLeft':
        sql.deleteGroup.run(event.data.deviceId, event.data.groupId);
        sql.deleteParticipants.run(event.data.deviceId, event.data.groupId);
        sql.deleteSettings.run(event.data.deviceId, event.data.groupId);
        return;
      case 'DeviceDeleted':
        sql.deleteDeviceGroups.run(event.data.deviceId);
        sql.deleteDeviceParticipants.run(event.data.deviceId);
        sql.deleteDeviceSettings.run(event.data.deviceId);
        return;
    }
  }

  /** Every group of the device, by id; `me` (the account's number) decides `isAdmin`. */
  list(deviceId: string, me: string | undefined): GroupSummary[] {
    const cached = this.lists.get(deviceId);
    if (cached && cached.me === me) return cached.items;
    const items = this.sql()
      .list.all(me ?? '', deviceId)
      .map(summaryOf);
    if (this.lists.size >= LISTS_KEPT) this.lists.delete(this.lists.keys().next().value!);
    this.lists.set(deviceId, { me, items });
    return items;
  }

  get(deviceId: string, groupId: string, me: string | undefined): GroupDetail | undefined {
    const row = this.sql().one.get(me ?? '', deviceId, groupId);
    if (!row) return undefined;
    const participants = this.sql()
      .participants.all(deviceId, groupId)
      .map((p) => ({ number: p.number, role: p.role as GroupRole }))
      .sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role] || a.number.localeCompare(b.number));
    return { ...summaryOf(row), participants };
  }

  private put(deviceId: string, group: GroupMetadata): void {
    const sql = this.sql();
    sql.deleteParticipants.run(deviceId, group.groupId);
    for (const p of group.participants) sql.addParticipant.run(deviceId, group.groupId, p.number, p.role);
    sql.upsert.run({
      device_id: deviceId,
      group_id: group.groupId,
      subject: group.subject,
      description: group.description ?? null,
      announce: Number(group.announce),
      locked: Number(group.locked),
      size: group.participants.length,
    });
    sql.putSettings.run({
      device_id: deviceId,
      group_id: group.groupId,
      ephemeral: group.ephemeral ?? 0,
      join_approval: Number(group.joinApproval === true),
      members_can_add: Number(group.membersCanAdd === true),
    });
  }

  private sql() {
    return (this.statements ??= this.prepare());
  }

  private prepare() {
    const db = this.db;
    const select = `SELECT g.group_id, g.subject, g.description, g.announce, g.locked, g.size, p.role AS my_role,
        coalesce(s.ephemeral, 0) AS ephemeral, coalesce(s.join_approval, 0) AS join_approval,
        coalesce(s.members_can_add, 0) AS members_can_add
      FROM groups g LEFT JOIN group_participants p ON p.device_id = g.device_id AND p.group_id = g.group_id AND p.number = ?
      LEFT JOIN group_settings s ON s.device_id = g.device_id AND s.group_id = g.group_id`;
    return {
      list: db.prepare<[string, string], GroupRow>(`${select} WHERE g.device_id = ? ORDER BY g.group_id`),
      one: db.prepare<[string, string, string], GroupRow>(`${select} WHERE g.device_id = ? AND g.group_id = ?`),
      participants: db.prepare<[string, string], { number: string; role: string }>(
        'SELECT number, role FROM group_participants WHERE device_id = ? AND group_id = ?',
      ),
      exists: db.prepare<[string, string], { one: number }>(
        'SELECT 1 AS one FROM groups WHERE device_id = ? AND group_id = ?',
      ),
      upsert: db.prepare(
        `INSERT INTO groups (device_id, group_id, subject, description, announce, locked, size)
         VALUES (@device_id, @group_id, @subject, @description, @announce, @locked, @size)
         ON CONFLICT (device_id, group_id) DO UPDATE SET subject = excluded.subject, description = excluded.description,
           announce = excluded.announce, locked = excluded.locked, size = excluded.size`,
      ),
      update: db.prepare(
        `UPDATE groups SET subject = coalesce(@subject, subject), description = coalesce(@description, description),
           announce = coalesce(@announce, announce), locked = coalesce(@locked, locked)
         WHERE device_id = @device_id AND group_id = @group_id`,
      ),
      resize: db.prepare<[string, string]>(
        'UPDATE groups SET size = (SELECT count(*) FROM group_participants p WHERE p.device_id = groups.device_id AND p.group_id = groups.group_id) WHERE device_id = ? AND group_id = ?',
      ),
      addParticipant: db.prepare<[string, string, string, string]>(
        'INSERT OR IGNORE INTO group_participants (device_id, group_id, number, role) VALUES (?, ?, ?, ?)',
      ),
      removeParticipant: db.prepare<[string, string, string]>(
        'DELETE FROM group_participants WHERE device_id = ? AND group_id = ? AND number = ?',
      ),
      setRole: db.prepare<[string, string, string, string]>(
        "UPDATE group_participants SET role = ? WHERE device_id = ? AND group_id = ? AND number = ? AND role <> 'superadmin'",
      ),
      deleteGroup: db.prepare<[string, string]>('DELETE FROM groups WHERE device_id = ? AND group_id = ?'),
      deleteParticipants: db.prepare<[string, string]>(
        'DELETE FROM group_participants WHERE device_id = ? AND group_id = ?',
      ),
      deleteDeviceGroups: db.prepare<[string]>('DELETE FROM groups WHERE device_id = ?'),
      deleteDeviceParticipants: db.prepare<[string]>('DELETE FROM group_participants WHERE device_id = ?'),
      putSettings: db.prepare(
        `INSERT INTO group_settings (device_id, group_id, ephemeral, join_approval, members_can_add)
         VALUES (@device_id, @group_id, @ephemeral, @join_approval, @members_can_add)
         ON CONFLICT (device_id, group_id) DO UPDATE SET ephemeral = excluded.ephemeral,
           join_approval = excluded.join_approval, members_can_add = excluded.members_can_add`,
      ),
      ensureSettings: db.prepare<[string, string]>(
        'INSERT OR IGNORE INTO group_settings (device_id, group_id, ephemeral, join_approval, members_can_add) VALUES (?, ?, 0, 0, 0)',
      ),
      updateSettings: db.prepare(
        `UPDATE group_settings SET ephemeral = coalesce(@ephemeral, ephemeral),
           join_approval = coalesce(@join_approval, join_approval), members_can_add = coalesce(@members_can_add, members_can_add)
         WHERE device_id = @device_id AND group_id = @group_id`,
      ),
      deleteSettings: db.prepare<[string, string]>('DELETE FROM group_settings WHERE device_id = ? AND group_id = ?'),
      deleteDeviceSettings: db.prepare<[string]>('DELETE FROM group_settings WHERE device_id = ?'),
    };
  }
}

function summaryOf(row: GroupRow): GroupSummary {
  return {
    groupId: row.group_id,
    subject: row.subject,
    ...(row.description === null || row.description === '' ? {} : { description: row.description }),
    size: row.size,
    isAdmin: row.my_role === 'admin' || row.my_role === 'superadmin',
    announce: row.announce === 1,
    locked: row.locked === 1,
    ephemeral: row.ephemeral,
    joinApproval: row.join_approval === 1,
    membersCanAdd: row.members_can_add === 1,
  };
}
