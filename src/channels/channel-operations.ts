/**
 * What a live engine connection does with channels (the engine port's `channels`, src/engines/engine.ts).
 * Declared here, with the channel events, so that the channels folder never needs the engines.
 */
import type { ChannelChange, ChannelMetadata } from './channel-events.js';

/** A post of a channel, as the network keeps it. */
export interface ChannelPost {
  waMessageId: string;
  /** `text`, `image`, `video`, … (the message kinds of the gateway). */
  type: string;
  body?: string;
  /** Unix seconds. */
  timestamp: number;
  /** emoji → how many reacted with it. */
  reactions: Record<string, number>;
}

export interface ChannelPage {
  /** Newest first. */
  items: ChannelPost[];
  /** Where the next (older) page starts; absent: no more. */
  next?: string;
}

export interface ChannelOperations {
  /** The account owns the new channel. */
  create(name: string, description?: string): Promise<ChannelMetadata>;
  /** By id; null when the network knows no such channel. */
  metadata(channelId: string): Promise<ChannelMetadata | null>;
  /** By the code of its link; null when unknown. */
  resolve(code: string): Promise<ChannelMetadata | null>;
  follow(channelId: string): Promise<void>;
  unfollow(channelId: string): Promise<void>;
  /** Name and description (owners and admins), muted (this account's own setting). */
  update(channelId: string, change: ChannelChange): Promise<void>;
  /** Posts, newest first, from `cursor` (a page's `next`) on. */
  messages(channelId: string, limit: number, cursor?: string): Promise<ChannelPage>;
  /** This account's reaction to a post (`""` takes it back); a post the channel does not have: `channel_post_not_found`. */
  react(channelId: string, waMessageId: string, emoji: string): Promise<void>;
}

/** Why the network refused a channel operation, as engines report it (EngineError codes). */
export const CHANNEL_ENGINE_ERRORS = ['channel_not_found', 'channel_post_not_found', 'not_channel_admin'] as const;
