/**
 * The channels decider: following or recording what is known already records nothing; a name or description
 * changed by a subscriber is refused (not_channel_admin), by anyone on an unknown channel not_found; a change
 * records only what differs; unfollowing a channel not followed records nothing.
 */
import { describe, it } from 'vitest';
import type { ChannelEvent, ChannelMetadata, ChannelRole } from '../../src/channels/channel-events.js';
import { channelsDecider } from '../../src/channels/channels-decider.js';
import { deciderSpecification } from '../support/decider-specification.js';

const spec = deciderSpecification(channelsDecider);
const C = '120363000000000001@newsletter';
const channel = (role: ChannelRole, over: Partial<ChannelMetadata> = {}) => ({
  channelId: C,
  name: 'News',
  description: 'Offers',
  muted: false,
  role,
  ...over,
});
const recorded = (role: ChannelRole, over: Partial<ChannelMetadata> = {}): ChannelEvent => ({
  type: 'ChannelRecorded',
  data: { deviceId: 'd', channel: channel(role, over), reason: 'followed' },
});

describe('the channels decider', () => {
  it('records a channel once; the same again records nothing, another role records it again', () => {
    spec
      .given([])
      .when({ type: 'RecordChannel', deviceId: 'd', channel: channel('subscriber'), reason: 'followed' })
      .then([recorded('subscriber')]);
    spec
      .given([recorded('subscriber')])
      .when({ type: 'RecordChannel', deviceId: 'd', channel: channel('subscriber'), reason: 'followed' })
      .thenNothing();
    spec
      .given([recorded('subscriber')])
      .when({ type: 'RecordChannel', deviceId: 'd', channel: channel('admin'), reason: 'followed' })
      .then([recorded('admin')]);
  });

  it('refuses a rename by a subscriber, and any change of a channel not followed', () => {
    spec
      .given([recorded('subscriber')])
      .when({ type: 'RecordUpdate', deviceId: 'd', channelId: C, change: { name: 'Mine' } })
      .thenRefused('not_channel_admin');
    spec
      .given([recorded('subscriber')])
      .when({ type: 'RecordUpdate', deviceId: 'd', channelId: C, change: { description: '' } })
      .thenRefused('not_channel_admin');
    spec
      .given([])
      .when({ type: 'RecordUpdate', deviceId: 'd', channelId: C, change: { muted: true } })
      .thenRefused('not_found');
  });

  it('records only what differs: a subscriber mutes, an admin renames; nothing new records nothing', () => {
    spec
      .given([recorded('subscriber')])
      .when({ type: 'RecordUpdate', deviceId: 'd', channelId: C, change: { muted: true } })
      .then([{ type: 'ChannelUpdated', data: { deviceId: 'd', channelId: C, muted: true } }]);
    spec
      .given([recorded('admin')])
      .when({ type: 'RecordUpdate', deviceId: 'd', channelId: C, change: { name: 'Shop', description: 'Offers' } })
      .then([{ type: 'ChannelUpdated', data: { deviceId: 'd', channelId: C, name: 'Shop' } }]);
    spec
      .given([
        recorded('owner'),
        { type: 'ChannelUpdated', data: { deviceId: 'd', channelId: C, name: 'Shop', muted: true } },
      ])
      .when({ type: 'RecordUpdate', deviceId: 'd', channelId: C, change: { name: 'Shop', muted: true } })
      .thenNothing();
  });

  it('records what the network reports without checking the role (a subscriber learns a rename, its promotion); a channel not followed is passed over', () => {
    spec
      .given([recorded('subscriber')])
      .when({ type: 'RecordReported', deviceId: 'd', channelId: C, change: { name: 'Shop', description: 'Offers' } })
      .then([{ type: 'ChannelUpdated', data: { deviceId: 'd', channelId: C, name: 'Shop' } }]);
    spec
      .given([recorded('subscriber')])
      .when({ type: 'RecordReported', deviceId: 'd', channelId: C, change: { role: 'admin' } })
      .then([{ type: 'ChannelUpdated', data: { deviceId: 'd', channelId: C, role: 'admin' } }]);
    spec
      .given([recorded('subscriber'), { type: 'ChannelUpdated', data: { deviceId: 'd', channelId: C, role: 'admin' } }])
      .when({ type: 'RecordReported', deviceId: 'd', channelId: C, change: { role: 'admin' } })
      .thenNothing();
    spec
      .given([])
      .when({ type: 'RecordReported', deviceId: 'd', channelId: C, change: { name: 'Shop' } })
      .thenNothing();
  });

  it('records a reaction the network reports for a followed channel only', () => {
    const reaction = { deviceId: 'd', channelId: C, waMessageId: 'P1', emoji: '👍', removed: false };
    spec
      .given([recorded('owner')])
      .when({ type: 'RecordReaction', ...reaction })
      .then([{ type: 'ChannelPostReacted', data: reaction }]);
    spec
      .given([])
      .when({ type: 'RecordReaction', ...reaction })
      .thenNothing();
  });

  it('unfollows a followed channel once', () => {
    const unfollowed: ChannelEvent = { type: 'ChannelUnfollowed', data: { deviceId: 'd', channelId: C } };
    spec
      .given([recorded('subscriber')])
      .when({ type: 'RecordUnfollow', deviceId: 'd', channelId: C })
      .then([unfollowed]);
    spec
      .given([recorded('subscriber'), unfollowed])
      .when({ type: 'RecordUnfollow', deviceId: 'd', channelId: C })
      .thenNothing();
  });
});
