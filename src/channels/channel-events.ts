/**
 * Events of a device's channels stream (`channels-<deviceId>`): the channels (WhatsApp newsletters) the account
 * owns, administers or follows, as this device changed them (docs/architecture.md, "Streams, their deciders,
 * writers and read models"). Posts are not recorded here: a channel's posts and their reaction counts live on the
 * network (GET /channels/:channelId/messages asks it); those of followed channels that arrive are inbound
 * messages of the channel's chat and leave as `channel.message`; a reaction the network tells of as it happens is
 * recorded (ChannelPostReacted) and leaves as `channel.reaction`.
 */
export const channelsStream = (deviceId: string) => `channels-${deviceId}`;

export const CHANNEL_ROLES = ['owner', 'admin', 'subscriber'] as const;
export type ChannelRole = (typeof CHANNEL_ROLES)[number];

/** What the network says about a channel. */
export interface ChannelMetadata {
  /** `<digits>@newsletter`. */
  channelId: string;
  name: string;
  description?: string;
  /** The code of its link (`https://whatsapp.com/channel/<code>`), when known. */
  inviteCode?: string;
  subscribers?: number;
  /** The account's role; absent: the account does not follow it. */
  role?: ChannelRole;
  muted?: boolean;
}

export interface ChannelChange {
  name?: string;
  description?: string;
  muted?: boolean;
}

/** The account created or followed a channel, or the network said it changed (`refreshed`: read again at `online`). */
export interface ChannelRecordedData {
  deviceId: string;
  channel: ChannelMetadata & { role: ChannelRole };
  reason: 'created' | 'followed' | 'refreshed';
}

/** `role`: the account's new role, reported by the network (an owner promoted or demoted it elsewhere). */
export interface ChannelUpdatedData extends ChannelChange {
  deviceId: string;
  channelId: string;
  role?: ChannelRole;
}

/**
 * A change of a followed channel made elsewhere, as the network reports it live (Baileys' newsletter notifications,
 * the sandbox network): its name or description (`settings`), or the account's role in it (`role`).
 */
export type ChannelReport =
  | { kind: 'settings'; channelId: string; name?: string; description?: string }
  | { kind: 'role'; channelId: string; role: ChannelRole }
  /** Someone reacted to a post (what an owner's or admin's account hears); `removed`: took a reaction back. */
  | { kind: 'reaction'; channelId: string; waMessageId: string; emoji: string; removed: boolean };

/** A reaction to a post of a channel the account follows, as the network reported it (`channel.reaction`). */
export interface ChannelPostReactedData {
  deviceId: string;
  channelId: string;
  waMessageId: string;
  /** `""` when the network did not say which (a reaction taken back). */
  emoji: string;
  removed: boolean;
}

export interface ChannelUnfollowedData {
  deviceId: string;
  channelId: string;
}

export type ChannelEvent =
  | { type: 'ChannelRecorded'; data: ChannelRecordedData }
  | { type: 'ChannelUpdated'; data: ChannelUpdatedData }
  | { type: 'ChannelUnfollowed'; data: ChannelUnfollowedData }
  | { type: 'ChannelPostReacted'; data: ChannelPostReactedData };

export const CHANNEL_EVENT_TYPES: ReadonlySet<string> = new Set<ChannelEvent['type']>([
  'ChannelRecorded',
  'ChannelUpdated',
  'ChannelUnfollowed',
  'ChannelPostReacted',
]);
