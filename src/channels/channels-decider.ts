/**
 * The decider of a device's channels stream (`channels-<deviceId>`). The state is every channel the account owns,
 * administers or follows, with its role: the checks that refuse a change (an unknown channel, a name changed by a
 * subscriber) read it, and a change that says nothing new is decided into nothing (following twice records once).
 */
import type { Decider } from '../commands/decider.js';
import { DomainError } from '../errors/domain-error.js';
import {
  CHANNEL_EVENT_TYPES,
  type ChannelChange,
  type ChannelEvent,
  type ChannelMetadata,
  type ChannelPostReactedData,
  type ChannelRecordedData,
  type ChannelRole,
} from './channel-events.js';

export interface ChannelState {
  name: string;
  description?: string;
  role: ChannelRole;
  muted: boolean;
}

export interface ChannelsState {
  channels: Readonly<Record<string, ChannelState>>;
}

export type ChannelsCommand =
  | {
      type: 'RecordChannel';
      deviceId: string;
      channel: ChannelMetadata & { role: ChannelRole };
      reason: ChannelRecordedData['reason'];
    }
  | { type: 'RecordUpdate'; deviceId: string; channelId: string; change: ChannelChange }
  | { type: 'RecordUnfollow'; deviceId: string; channelId: string }
  /** A change the network reported (ChannelReport): no role is checked, a channel not followed is passed over. */
  | { type: 'RecordReported'; deviceId: string; channelId: string; change: ChannelChange & { role?: ChannelRole } }
  /** A reaction the network reported: recorded for a channel the account follows, passed over for any other. */
  | ({ type: 'RecordReaction' } & ChannelPostReactedData);

export const unknownChannel = (channelId: string) =>
  new DomainError('not_found', `the account does not own, administer or follow the channel ${channelId}`);

export const notChannelAdmin = (channelId: string) =>
  new DomainError('not_channel_admin', `the account is not an owner or admin of the channel ${channelId}`);

export function requireChannel(state: ChannelsState, channelId: string): ChannelState {
  const channel = state.channels[channelId];
  if (!channel) throw unknownChannel(channelId);
  return channel;
}

/** Owners and admins post and change the name and description; a subscriber (or a stranger) does not. */
export function requireChannelAdmin(state: ChannelsState, channelId: string): ChannelState {
  const channel = state.channels[channelId];
  if (!channel || channel.role === 'subscriber') throw notChannelAdmin(channelId);
  return channel;
}

const stateOf = (channel: ChannelMetadata & { role: ChannelRole }): ChannelState => ({
  name: channel.name,
  ...(channel.description === undefined ? {} : { description: channel.description }),
  role: channel.role,
  muted: channel.muted === true,
});

/** Only what differs from the state (undefined: nothing does). */
function changeOf(
  known: ChannelState,
  change: ChannelChange & { role?: ChannelRole },
): (ChannelChange & { role?: ChannelRole }) | undefined {
  const changed: ChannelChange & { role?: ChannelRole } = {
    ...(change.role !== undefined && change.role !== known.role ? { role: change.role } : {}),
    ...(change.name !== undefined && change.name !== known.name ? { name: change.name } : {}),
    ...(change.description !== undefined && change.description !== (known.description ?? '')
      ? { description: change.description }
      : {}),
    ...(change.muted !== undefined && change.muted !== known.muted ? { muted: change.muted } : {}),
  };
  return Object.keys(changed).length === 0 ? undefined : changed;
}

export const channelsDecider: Decider<ChannelsState, ChannelsCommand, ChannelEvent> = {
  eventTypes: CHANNEL_EVENT_TYPES,

  initialState: () => ({ channels: {} }),

  evolve(state, event) {
    switch (event.type) {
      case 'ChannelRecorded':
        return { channels: { ...state.channels, [event.data.channel.channelId]: stateOf(event.data.channel) } };
      case 'ChannelUpdated': {
        const known = state.channels[event.data.channelId];
        if (!known) return state;
        const { name, description, muted, role } = event.data;
        const next: ChannelState = {
          ...known,
          ...(role === undefined ? {} : { role }),
          ...(name === undefined ? {} : { name }),
          ...(description === undefined ? {} : { description }),
          ...(muted === undefined ? {} : { muted }),
        };
        return { channels: { ...state.channels, [event.data.channelId]: next } };
      }
      case 'ChannelPostReacted':
        return state;
      case 'ChannelUnfollowed': {
        const channels = { ...state.channels };
        delete channels[event.data.channelId];
        return { channels };
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'RecordChannel': {
        const known = state.channels[command.channel.channelId];
        const next = stateOf(command.channel);
        if (
          known &&
          known.role === next.role &&
          known.name === next.name &&
          (known.description ?? '') === (next.description ?? '') &&
          known.muted === next.muted
        )
          return [];
        return [
          {
            type: 'ChannelRecorded',
            data: { deviceId: command.deviceId, channel: command.channel, reason: command.reason },
          },
        ];
      }
      case 'RecordUpdate': {
        const { deviceId, channelId, change } = command;
        const known = requireChannel(state, channelId);
        if (change.name !== undefined || change.description !== undefined) requireChannelAdmin(state, channelId);
        const changed = changeOf(known, change);
        return changed ? [{ type: 'ChannelUpdated', data: { deviceId, channelId, ...changed } }] : [];
      }
      case 'RecordReported': {
        const { deviceId, channelId, change } = command;
        const known = state.channels[channelId];
        const changed = known && changeOf(known, change);
        return changed ? [{ type: 'ChannelUpdated', data: { deviceId, channelId, ...changed } }] : [];
      }
      case 'RecordReaction': {
        const { type: _type, ...data } = command;
        return state.channels[data.channelId] ? [{ type: 'ChannelPostReacted', data }] : [];
      }
      case 'RecordUnfollow':
        if (!state.channels[command.channelId]) return [];
        return [{ type: 'ChannelUnfollowed', data: { deviceId: command.deviceId, channelId: command.channelId } }];
    }
  },
};
