import { describe, it } from 'vitest';
import type { GroupEvent, GroupMetadata } from '../../src/groups/group-events.js';
import { groupsDecider, requireAdmin } from '../../src/groups/groups-decider.js';
import { fold } from '../../src/commands/decider.js';
import { deciderSpecification } from '../support/decider-specification.js';
import { expect } from 'vitest';

const spec = deciderSpecification(groupsDecider);
const G = '120363000000000001@g.us';
const H = '120363000000000002@g.us';
const ME = '4915100000001';
const ANNA = '4915111111111';
const BEN = '4915122222222';
const group = (over: Partial<GroupMetadata> = {}): GroupMetadata => ({
  groupId: G,
  subject: 'Team',
  announce: false,
  locked: false,
  participants: [
    { number: ME, role: 'superadmin' },
    { number: ANNA, role: 'member' },
  ],
  ...over,
});
const recorded = (
  g: GroupMetadata,
  reason: 'created' | 'refreshed' | 'joined' | 'reported' = 'created',
): GroupEvent => ({
  type: 'GroupMetadataRecorded',
  data: { deviceId: 'd', group: g, reason },
});

describe('the groups decider', () => {
  it('records a new group, and nothing when the same metadata comes again', () => {
    spec
      .given([])
      .when({ type: 'RecordGroups', deviceId: 'd', groups: [group()], reason: 'created' })
      .then([recorded(group())]);
    spec
      .given([recorded(group())])
      .when({ type: 'RecordGroups', deviceId: 'd', groups: [group()], reason: 'reported' })
      .thenNothing();
  });

  it('records only the settings that change, and nothing for an echo of its own change', () => {
    spec
      .given([recorded(group())])
      .when({ type: 'RecordUpdate', deviceId: 'd', groupId: G, change: { subject: 'Team', announce: true }, by: ME })
      .then([{ type: 'GroupUpdated', data: { deviceId: 'd', groupId: G, announce: true, by: ME } }]);
    spec
      .given([recorded(group()), { type: 'GroupUpdated', data: { deviceId: 'd', groupId: G, announce: true } }])
      .when({ type: 'RecordUpdate', deviceId: 'd', groupId: G, change: { announce: true } })
      .thenNothing();
  });

  it('records the participants an action changes, and the account leaving when it is removed', () => {
    spec
      .given([recorded(group())])
      .when({ type: 'RecordParticipants', deviceId: 'd', groupId: G, action: 'add', participants: [ANNA, BEN] })
      .then([
        { type: 'GroupParticipantsChanged', data: { deviceId: 'd', groupId: G, action: 'add', participants: [BEN] } },
      ]);
    spec
      .given([
        recorded(
          group({
            participants: [
              { number: ANNA, role: 'superadmin' },
              { number: ME, role: 'member' },
            ],
          }),
        ),
      ])
      .when({
        type: 'RecordParticipants',
        deviceId: 'd',
        groupId: G,
        action: 'remove',
        participants: [ME],
        by: ANNA,
        me: ME,
      })
      .then([
        {
          type: 'GroupParticipantsChanged',
          data: { deviceId: 'd', groupId: G, action: 'remove', participants: [ME], by: ANNA },
        },
        { type: 'GroupLeft', data: { deviceId: 'd', groupId: G, reason: 'removed' } },
      ]);
    spec
      .given([recorded(group())])
      .when({ type: 'RecordParticipants', deviceId: 'd', groupId: G, action: 'demote', participants: [ANNA] })
      .thenNothing();
  });

  it('a refresh records what changed and leaves the groups the network no longer lists', () => {
    const other = group({ groupId: H, subject: 'Other' });
    spec
      .given([recorded(group()), recorded(other)])
      .when({ type: 'SyncGroups', deviceId: 'd', groups: [group({ subject: 'Renamed' })], listedAt: 2 })
      .then([
        recorded(group({ subject: 'Renamed' }), 'refreshed'),
        { type: 'GroupLeft', data: { deviceId: 'd', groupId: H, reason: 'gone' } },
      ]);
  });

  it('a refresh asked before a change does not undo it', () => {
    // The list was asked for at seq 0; the group was created after (seq 1): it stays.
    spec
      .given([recorded(group())])
      .when({ type: 'SyncGroups', deviceId: 'd', groups: [], listedAt: 0 })
      .thenNothing();
    spec
      .given([recorded(group())])
      .when({
        type: 'RecordGroups',
        deviceId: 'd',
        groups: [group({ subject: 'Old' })],
        reason: 'refreshed',
        listedAt: 0,
      })
      .thenNothing();
  });

  it('refuses a group the account is not in (not_found) and a change by a member (not_group_admin)', () => {
    const state = fold(groupsDecider, groupsDecider.initialState(), [recorded(group())]);
    expect(() => requireAdmin(state, H, ME)).toThrow(expect.objectContaining({ code: 'not_found' }));
    expect(() => requireAdmin(state, G, ANNA)).toThrow(expect.objectContaining({ code: 'not_group_admin' }));
    expect(requireAdmin(state, G, ME).subject).toBe('Team');
  });

  it('closes the requests an admin of this account rejected, so the number may ask again; none it holds open is no news', () => {
    const requested: GroupEvent = {
      type: 'GroupJoinRequested',
      data: { deviceId: 'd', groupId: G, number: BEN, action: 'created' },
    };
    const reject = { type: 'RecordJoinRequestsRejected', deviceId: 'd', groupId: G, numbers: [BEN, ANNA] } as const;
    const rejected: GroupEvent = {
      type: 'GroupJoinRequestsRejected',
      data: { deviceId: 'd', groupId: G, numbers: [BEN] },
    };
    spec
      .given([recorded(group()), requested])
      .when(reject)
      .then([rejected]);
    spec
      .given([recorded(group())])
      .when(reject)
      .thenNothing();
    spec
      .given([recorded(group()), requested, rejected])
      .when({ type: 'RecordJoinRequest', deviceId: 'd', groupId: G, number: BEN, action: 'created' })
      .then([requested]);
  });

  it('records a join request once however often it is delivered, and nothing for a group the account is not in', () => {
    const request = (action: 'created' | 'revoked', groupId = G) =>
      ({ type: 'RecordJoinRequest', deviceId: 'd', groupId, number: BEN, action }) as const;
    const requested = (action: 'created' | 'revoked'): GroupEvent => ({
      type: 'GroupJoinRequested',
      data: { deviceId: 'd', groupId: G, number: BEN, action },
    });
    spec
      .given([recorded(group())])
      .when(request('created'))
      .then([requested('created')]);
    // Delivered again after a reconnect.
    spec
      .given([recorded(group()), requested('created')])
      .when(request('created'))
      .thenNothing();
    spec
      .given([recorded(group()), requested('created')])
      .when(request('revoked'))
      .then([requested('revoked')]);
    spec
      .given([recorded(group()), requested('created'), requested('revoked')])
      .when(request('revoked'))
      .thenNothing();
    // Asked again after the first was withdrawn, or after joining and leaving.
    spec
      .given([recorded(group()), requested('created'), requested('revoked')])
      .when(request('created'))
      .then([requested('created')]);
    spec
      .given([recorded(group())])
      .when(request('created', H))
      .thenNothing();
  });

  it('records a picture change only for a group the account is in, and a removal told again once', () => {
    const picture = (removed: boolean, groupId = G) =>
      ({ type: 'RecordPicture', deviceId: 'd', groupId, removed }) as const;
    const changed = (removed: boolean): GroupEvent => ({
      type: 'GroupPictureChanged',
      data: { deviceId: 'd', groupId: G, removed },
    });
    spec
      .given([recorded(group())])
      .when(picture(false, H))
      .thenNothing();
    spec
      .given([recorded(group())])
      .when(picture(true))
      .then([changed(true)]);
    spec
      .given([recorded(group()), changed(true)])
      .when(picture(true))
      .thenNothing();
    spec
      .given([recorded(group()), changed(true)])
      .when(picture(false))
      .then([changed(false)]);
  });
});
