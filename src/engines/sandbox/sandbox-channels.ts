/**
 * Channels (newsletters) of the simulated network: ids shaped as WhatsApp's (`120363` + 12 digits +
 * `@newsletter`), an owner, admins, followers (each with its own mute) and the posts with their reactions.
 * The rules a network enforces live here: only the owner and admins post or rename, an unknown channel is
 * `channel_not_found`. Kept in memory: channels live as long as the sandbox process.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { ChannelMetadata, ChannelReport, ChannelRole } from '../../channels/channel-events.js';
import type { ChannelOperations, ChannelPost } from '../../channels/channel-operations.js';
import { EngineError } from '../engine.js';

export interface SandboxChannel {
  channelId: string;
  name: string;
  description: string;
  inviteCode: string;
  owner: string;
  admins: Set<string>;
  /** Follower's number → muted. */
  followers: Map<string, boolean>;
  /** Oldest first; reactions by number → emoji. */
  posts: Array<Omit<ChannelPost, 'reactions'> & { reactions: Map<string, string> }>;
}

export class SandboxChannels {
  private readonly channels = new Map<string, SandboxChannel>();
  private readonly byCode = new Map<string, string>();

  create(owner: string, name: string, description = ''): SandboxChannel {
    let digits = '';
    for (let i = 0; i < 12; i++) digits += String(randomInt(10));
    const channel: SandboxChannel = {
      channelId: `120363${digits}@newsletter`,
      name,
      description,
      inviteCode: randomBytes(16).toString('base64url').slice(0, 22),
      owner,
      admins: new Set(),
      followers: new Map(),
      posts: [],
    };
    this.channels.set(channel.channelId, channel);
    this.byCode.set(channel.inviteCode, channel.channelId);
    return channel;
  }

  get(channelId: string): SandboxChannel | undefined {
    return this.channels.get(channelId);
  }

  byInviteCode(code: string): SandboxChannel | undefined {
    const channelId = this.byCode.get(code);
    return channelId === undefined ? undefined : this.channels.get(channelId);
  }

  existing(channelId: string): SandboxChannel {
    const channel = this.channels.get(channelId);
    if (!channel)
      throw new EngineError('channel_not_found', `the channel ${channelId} does not exist in the sandbox`, true);
    return channel;
  }

  /** The channel, where `number` may post to it and change it. */
  adminOf(channelId: string, number: string): SandboxChannel {
    const channel = this.existing(channelId);
    if (roleOf(channel, number) !== 'owner' && roleOf(channel, number) !== 'admin')
      throw new EngineError(
        'not_channel_admin',
        `${number} is not an owner or admin of the channel ${channelId}`,
        true,
      );
    return channel;
  }

  /** Who hears of reactions to the posts: the owner and the admins. */
  adminsOf(channelId: string): string[] {
    const channel = this.channels.get(channelId);
    return channel ? [channel.owner, ...channel.admins] : [];
  }

  /** Who gets a new post: the followers (the owner and admins see it as theirs). */
  followersOf(channelId: string): string[] {
    return [...(this.channels.get(channelId)?.followers.keys() ?? [])];
  }

  post(channelId: string, post: Omit<ChannelPost, 'reactions'>): void {
    this.channels.get(channelId)?.posts.push({ ...post, reactions: new Map() });
  }

  /** `number` reacts to a post (an empty emoji takes the reaction back); false when there is no such post. */
  react(channelId: string, waMessageId: string, number: string, emoji: string): boolean {
    const post = this.channels.get(channelId)?.posts.find((p) => p.waMessageId === waMessageId);
    if (!post) return false;
    if (emoji === '') post.reactions.delete(number);
    else post.reactions.set(number, emoji);
    return true;
  }
}

/** What the owner and admins hear of a reaction (`""`: one taken back). */
export const reactionReport = (channelId: string, waMessageId: string, emoji: string): ChannelReport => ({
  kind: 'reaction',
  channelId,
  waMessageId,
  emoji,
  removed: emoji === '',
});

export function roleOf(channel: SandboxChannel, number: string): ChannelRole | undefined {
  if (channel.owner === number) return 'owner';
  if (channel.admins.has(number)) return 'admin';
  return channel.followers.has(number) ? 'subscriber' : undefined;
}

function metadataOf(channel: SandboxChannel, number: string): ChannelMetadata {
  const role = roleOf(channel, number);
  return {
    channelId: channel.channelId,
    name: channel.name,
    ...(channel.description === '' ? {} : { description: channel.description }),
    inviteCode: channel.inviteCode,
    subscribers: channel.followers.size,
    ...(role ? { role } : {}),
    muted: channel.followers.get(number) === true,
  };
}

/**
 * A sandbox device's channel operations (the engine port's ChannelOperations) on the network's channels; `tell`
 * hands a change to the devices of `numbers`: a rename to the followers, a reaction to the owner and admins.
 */
export function sandboxChannelOperations(
  channels: SandboxChannels,
  me: () => string,
  tell: (report: ChannelReport, numbers: readonly string[]) => void = () => undefined,
): ChannelOperations {
  return {
    async create(name, description) {
      const owner = me();
      return metadataOf(channels.create(owner, name, description), owner);
    },
    async metadata(channelId) {
      const number = me();
      const channel = channels.get(channelId);
      return channel ? metadataOf(channel, number) : null;
    },
    async resolve(code) {
      const number = me();
      const channel = channels.byInviteCode(code);
      return channel ? metadataOf(channel, number) : null;
    },
    async follow(channelId) {
      const number = me();
      const channel = channels.existing(channelId);
      if (roleOf(channel, number) === undefined) channel.followers.set(number, false);
    },
    async unfollow(channelId) {
      channels.existing(channelId).followers.delete(me());
    },
    async update(channelId, change) {
      const number = me();
      const channel =
        change.name !== undefined || change.description !== undefined
          ? channels.adminOf(channelId, number)
          : channels.existing(channelId);
      if (change.name !== undefined) channel.name = change.name;
      if (change.description !== undefined) channel.description = change.description;
      if (change.name !== undefined || change.description !== undefined) {
        const { name, description } = change;
        const settings = {
          ...(name === undefined ? {} : { name }),
          ...(description === undefined ? {} : { description }),
        };
        tell({ kind: 'settings', channelId, ...settings }, channels.followersOf(channelId));
      }
      if (change.muted !== undefined && channel.followers.has(number)) channel.followers.set(number, change.muted);
    },
    async messages(channelId, limit, cursor) {
      me();
      const { posts } = channels.existing(channelId);
      // The cursor is the place of the next older post: posts are only ever appended, so it stays put.
      const start = cursor === undefined ? posts.length - 1 : Number(cursor);
      if (!Number.isInteger(start) || start < -1 || start >= posts.length)
        throw new EngineError('invalid_cursor', `the cursor ${cursor} is not one of this channel's pages`, true);
      const items: ChannelPost[] = [];
      for (let i = start; i >= 0 && items.length < limit; i--) {
        const { reactions, ...post } = posts[i];
        const counts: Record<string, number> = {};
        for (const emoji of reactions.values()) counts[emoji] = (counts[emoji] ?? 0) + 1;
        items.push({ ...post, reactions: counts });
      }
      const next = start - items.length;
      return { items, ...(next >= 0 ? { next: String(next) } : {}) };
    },
    async react(channelId, waMessageId, emoji) {
      const number = me();
      channels.existing(channelId);
      if (!channels.react(channelId, waMessageId, number, emoji))
        throw new EngineError('channel_post_not_found', `the channel ${channelId} has no post ${waMessageId}`, true);
      tell(reactionReport(channelId, waMessageId, emoji), channels.adminsOf(channelId));
    },
  };
}
