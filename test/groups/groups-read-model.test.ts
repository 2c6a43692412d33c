/**
 * The groups read model (src/groups/groups-read-model.ts), fed events directly: a group's metadata, its
 * settings and participants as they change, the account's own role (by its number), leaving a group, a deleted
 * device, and the per-device list kept in memory following every change.
 */
import { describe, expect, it } from 'vitest';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import type { GroupEvent, GroupMetadata, ParticipantAction } from '../../src/groups/group-events.js';
import { GroupsReadModel } from '../../src/groups/groups-read-model.js';
import { readModelSpecification } from '../support/read-model-specification.js';

type Event = GroupEvent | DeviceEvent;

const spec = readModelSpecification<Event, GroupsReadModel>((db) => new GroupsReadModel(db));

const ME = '4915100000000';
const G1 = '120363000000000001@g.us';
const G2 = '120363000000000002@g.us';

const group = (groupId: string, overrides: Partial<GroupMetadata> = {}): GroupMetadata => ({
  groupId,
  subject: `Group ${groupId.slice(15, 18)}`,
  announce: false,
  locked: false,
  participants: [
    { number: '4915100000001', role: 'superadmin' },
    { number: ME, role: 'member' },
  ],
  ...overrides,
});
const recorded = (deviceId: string, metadata: GroupMetadata): Event => ({
  type: 'GroupMetadataRecorded',
  data: { deviceId, group: metadata, reason: 'refreshed' },
});
const participants = (deviceId: string, groupId: string, action: ParticipantAction, ...numbers: string[]): Event => ({
  type: 'GroupParticipantsChanged',
  data: { deviceId, groupId, action, participants: numbers },
});
const left = (deviceId: string, groupId: string): Event => ({
  type: 'GroupLeft',
  data: { deviceId, groupId, reason: 'left' },
});

/** The Part 3 settings of a group that never set them. */
const OFF = { ephemeral: 0, joinApproval: false, membersCanAdd: false } as const;

describe('groups read model', () => {
  it("lists a device's groups by id with their size and settings, and details one with its participants by role", () => {
    spec
      .given(
        recorded('d1', group(G2, { subject: 'Second', description: 'about it', announce: true })),
        recorded('d1', group(G1, { subject: 'First', locked: true })),
        recorded('d2', group(G1, { subject: 'Seen by d2' })),
      )
      .then(
        (groups) => groups.list('d1', ME),
        [
          { groupId: G1, subject: 'First', size: 2, isAdmin: false, announce: false, locked: true, ...OFF },
          {
            groupId: G2,
            subject: 'Second',
            description: 'about it',
            size: 2,
            isAdmin: false,
            announce: true,
            locked: false,
            ...OFF,
          },
        ],
      )
      .then((groups) => groups.get('d1', G1, ME), {
        groupId: G1,
        subject: 'First',
        size: 2,
        isAdmin: false,
        announce: false,
        locked: true,
        ...OFF,
        participants: [
          { number: '4915100000001', role: 'superadmin' },
          { number: ME, role: 'member' },
        ],
      })
      .then((groups) => groups.list('d2', ME).map((g) => g.subject), ['Seen by d2'])
      .then((groups) => groups.get('d1', '120363000000000404@g.us', ME), undefined)
      .then((groups) => groups.list('nobody', ME), []);
  });

  it('changes only the settings an update names, and a refresh replaces the whole group', () => {
    spec
      .given(recorded('d1', group(G1, { subject: 'Old', description: 'kept' })))
      .given({ type: 'GroupUpdated', data: { deviceId: 'd1', groupId: G1, subject: 'New', announce: true } })
      .then(
        (groups) => groups.get('d1', G1, ME),
        expect.objectContaining({ subject: 'New', description: 'kept', announce: true, locked: false }),
      )
      .given({ type: 'GroupUpdated', data: { deviceId: 'd1', groupId: G1, locked: true, by: '4915100000001' } })
      .then(
        (groups) => groups.list('d1', ME)[0],
        expect.objectContaining({ subject: 'New', announce: true, locked: true }),
      )
      .given(
        recorded(
          'd1',
          group(G1, { subject: 'Refreshed', participants: [{ number: '4915100000009', role: 'superadmin' }] }),
        ),
      )
      .then((groups) => groups.get('d1', G1, ME), {
        groupId: G1,
        subject: 'Refreshed',
        size: 1,
        isAdmin: false,
        announce: false,
        locked: false,
        ...OFF,
        participants: [{ number: '4915100000009', role: 'superadmin' }],
      });
  });

  it("follows participants added, removed, promoted and demoted, with the group's size and the account's role", () => {
    spec
      .given(recorded('d1', group(G1)))
      .then((groups) => groups.list('d1', ME)[0]?.isAdmin, false)
      .given(participants('d1', G1, 'promote', ME))
      .then((groups) => groups.list('d1', ME)[0]?.isAdmin, true)
      .given(participants('d1', G1, 'add', '4915100000002', '4915100000003', ME))
      .then(
        (groups) => groups.get('d1', G1, ME)?.participants,
        [
          { number: '4915100000001', role: 'superadmin' },
          { number: ME, role: 'admin' },
          { number: '4915100000002', role: 'member' },
          { number: '4915100000003', role: 'member' },
        ],
      )
      .then((groups) => groups.list('d1', ME)[0]?.size, 4)
      // A superadmin (the group's creator) stays one whatever a demote says.
      .given(participants('d1', G1, 'demote', ME, '4915100000001'), participants('d1', G1, 'remove', '4915100000002'))
      .then(
        (groups) => groups.get('d1', G1, ME)?.participants,
        [
          { number: '4915100000001', role: 'superadmin' },
          { number: ME, role: 'member' },
          { number: '4915100000003', role: 'member' },
        ],
      )
      .then((groups) => groups.list('d1', ME)[0], expect.objectContaining({ size: 3, isAdmin: false }));
  });

  it('answers isAdmin for the number asked about, and false without one', () => {
    spec
      .given(recorded('d1', group(G1)))
      .then((groups) => groups.list('d1', '4915100000001')[0]?.isAdmin, true)
      .then((groups) => groups.list('d1', ME)[0]?.isAdmin, false)
      .then((groups) => groups.list('d1', undefined)[0]?.isAdmin, false)
      .then((groups) => groups.get('d1', G1, '4915100000001')?.isAdmin, true);
  });

  it('ignores participant changes of a group it does not list (they do not make it one)', () => {
    spec
      .given(participants('d1', G1, 'add', '4915100000002'))
      .then((groups) => groups.list('d1', ME), [])
      .then((groups) => groups.get('d1', G1, ME), undefined)
      .given(recorded('d1', group(G1)))
      .then((groups) => groups.get('d1', G1, ME)?.size, 2);
  });

  it('drops a group the account left, and every group of a deleted device', () => {
    spec
      .given(recorded('d1', group(G1)), recorded('d1', group(G2)), recorded('d2', group(G1)))
      .then((groups) => groups.list('d1', ME).length, 2)
      .given(left('d1', G1))
      .then((groups) => groups.list('d1', ME).map((g) => g.groupId), [G2])
      .then((groups) => groups.get('d1', G1, ME), undefined)
      .given({ type: 'DeviceDeleted', data: { deviceId: 'd1' } })
      .then((groups) => groups.list('d1', ME), [])
      .then((groups) => groups.list('d2', ME).map((g) => g.groupId), [G1])
      // A group joined again starts from what the network says now, with no participants of before.
      .given(recorded('d1', group(G1, { participants: [{ number: ME, role: 'admin' }] })))
      .then((groups) => groups.get('d1', G1, ME)?.participants, [{ number: ME, role: 'admin' }]);
  });

  it('ignores a revoked invite link', () => {
    spec
      .given(recorded('d1', group(G1)), { type: 'GroupInviteRevoked', data: { deviceId: 'd1', groupId: G1 } })
      .then((groups) => groups.list('d1', ME).map((g) => g.groupId), [G1]);
  });

  it('shows disappearing messages, join approval and who adds, as recorded and as changed (a group left forgets them)', () => {
    spec
      .given(recorded('d1', group(G1, { ephemeral: 86_400, joinApproval: true })))
      .then(
        (groups) => groups.get('d1', G1, ME),
        expect.objectContaining({ ephemeral: 86_400, joinApproval: true, membersCanAdd: false }),
      )
      .given({ type: 'GroupUpdated', data: { deviceId: 'd1', groupId: G1, membersCanAdd: true, ephemeral: 0 } })
      .then(
        (groups) => groups.list('d1', ME)[0],
        expect.objectContaining({ ephemeral: 0, joinApproval: true, membersCanAdd: true }),
      )
      .given({ type: 'GroupPictureChanged', data: { deviceId: 'd1', groupId: G1, removed: false } })
      .given(left('d1', G1), recorded('d1', group(G1)))
      .then((groups) => groups.get('d1', G1, ME), expect.objectContaining(OFF));
  });
});
