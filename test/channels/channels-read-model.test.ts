/** The channels read model (src/channels/channels-read-model.ts): a device's channels, its role and mute in each. */
import { describe, it } from 'vitest';
import type { ChannelEvent } from '../../src/channels/channel-events.js';
import { ChannelsReadModel } from '../../src/channels/channels-read-model.js';
import type { DeviceEvent } from '../../src/devices/device-events.js';
import { readModelSpecification } from '../support/read-model-specification.js';

type Event = ChannelEvent | Extract<DeviceEvent, { type: 'DeviceDeleted' }>;

const spec = readModelSpecification<Event, ChannelsReadModel>((db) => new ChannelsReadModel(db));
const C1 = '120363000000000001@newsletter';
const C2 = '120363000000000002@newsletter';

const recorded = (deviceId: string, channelId: string, role: 'owner' | 'subscriber'): Event => ({
  type: 'ChannelRecorded',
  data: {
    deviceId,
    channel: { channelId, name: 'News', description: 'Offers', inviteCode: 'CODE', subscribers: 3, role, muted: false },
    reason: role === 'owner' ? 'created' : 'followed',
  },
});

describe('channels read model', () => {
  it('lists the channels of a device with its role; changes, unfollows and a deleted device follow', () => {
    spec
      .given(recorded('d1', C2, 'subscriber'), recorded('d1', C1, 'owner'), recorded('d2', C1, 'subscriber'))
      .then(
        (model) => model.list('d1'),
        [
          {
            channelId: C1,
            name: 'News',
            description: 'Offers',
            role: 'owner',
            subscribers: 3,
            muted: false,
            inviteLink: 'https://whatsapp.com/channel/CODE',
          },
          {
            channelId: C2,
            name: 'News',
            description: 'Offers',
            role: 'subscriber',
            subscribers: 3,
            muted: false,
            inviteLink: 'https://whatsapp.com/channel/CODE',
          },
        ],
      )
      .then((model) => model.roleOf('d2', C1), 'subscriber')
      .given({ type: 'ChannelUpdated', data: { deviceId: 'd1', channelId: C1, name: 'Shop', description: '' } })
      .given({ type: 'ChannelUpdated', data: { deviceId: 'd1', channelId: C2, muted: true } })
      .then(
        (model) => model.list('d1').map((c) => [c.channelId, c.name, c.description, c.muted]),
        [
          [C1, 'Shop', undefined, false],
          [C2, 'News', 'Offers', true],
        ],
      )
      // The account promoted elsewhere, as the network reported it.
      .given({ type: 'ChannelUpdated', data: { deviceId: 'd2', channelId: C1, role: 'admin' } })
      .then((model) => model.get('d2', C1)?.role, 'admin')
      .then((model) => model.get('d1', C1)?.name, 'Shop')
      .given({ type: 'ChannelUnfollowed', data: { deviceId: 'd1', channelId: C2 } })
      .then((model) => model.roleOf('d1', C2), undefined)
      .given({ type: 'DeviceDeleted', data: { deviceId: 'd1' } })
      .then((model) => model.list('d1'), [])
      .then((model) => model.get('d2', C1)?.role, 'admin');
  });
});
