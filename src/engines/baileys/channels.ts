/**
 * Channels (newsletters) through Baileys: the engine port's ChannelOperations mapped onto newsletterCreate,
 * newsletterMetadata (by jid or invite code), newsletterFollow / …Unfollow, newsletterMute / …Unmute,
 * newsletterUpdateName / …Description and newsletterFetchMessages. Posts of followed channels arrive as messages
 * of the channel's JID (baileys-inbound.ts), posting is a send to that JID (baileys-outbound.ts).
 *
 * newsletterMetadata answers WhatsApp's own (MEX) shape, name and description nested in `thread_metadata`, the
 * account's role and mute in `viewer_metadata`; newsletterCreate answers Baileys' flattened one: both are read.
 */
import { type BinaryNode, type WAMessage, proto } from 'baileys';
import { LRUCache } from 'lru-cache';
import type { ChannelMetadata, ChannelReport, ChannelRole } from '../../channels/channel-events.js';
import { isChannelId } from '../../channels/channel-id.js';
import type { ChannelOperations, ChannelPost } from '../../channels/channel-operations.js';
import { EngineError } from '../engine.js';
import type { BaileysSocket } from './baileys-socket.js';
import { statusCodeOf } from './disconnect-kind.js';
import { inboundMessageOf } from './inbound-message.js';

export type BaileysChannelSocket = Required<
  Pick<
    BaileysSocket,
    | 'newsletterCreate'
    | 'newsletterMetadata'
    | 'newsletterFollow'
    | 'newsletterUnfollow'
    | 'newsletterMute'
    | 'newsletterUnmute'
    | 'newsletterUpdateName'
    | 'newsletterUpdateDescription'
    | 'newsletterFetchMessages'
    | 'newsletterReactMessage'
  >
>;

/** How many of a channel's newest posts are read to find a post's server id this connection has not seen. */
const POSTS_SEARCHED = 100;

/**
 * Posts' server ids as this connection learned them (a page read, a post received): WhatsApp addresses a reaction
 * to a post, and reports reactions and views, by the post's server id, the gateway by its waMessageId.
 */
export class ChannelPostIds {
  private readonly ids = new LRUCache<string, string>({ max: 5_000 });

  learn(channelId: string, waMessageId: string, serverId: string): void {
    this.ids.set(`${channelId} id ${waMessageId}`, serverId);
    this.ids.set(`${channelId} server ${serverId}`, waMessageId);
  }

  serverIdOf(channelId: string, waMessageId: string): string | undefined {
    return this.ids.get(`${channelId} id ${waMessageId}`);
  }

  waMessageIdOf(channelId: string, serverId: string): string | undefined {
    return this.ids.get(`${channelId} server ${serverId}`);
  }
}

export function hasChannels(socket: BaileysSocket): socket is BaileysSocket & BaileysChannelSocket {
  return (
    typeof socket.newsletterCreate === 'function' &&
    typeof socket.newsletterFetchMessages === 'function' &&
    typeof socket.newsletterReactMessage === 'function'
  );
}

/** A text field WhatsApp writes as a string or as `{ text }`. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const text = (value as { text?: unknown } | null | undefined)?.text;
  return typeof text === 'string' ? text : undefined;
}

const ROLES: Readonly<Record<string, ChannelRole>> = { OWNER: 'owner', ADMIN: 'admin', SUBSCRIBER: 'subscriber' };

/** A channel's metadata as either shape Baileys answers; undefined when it has no id. */
export function channelOf(raw: unknown): ChannelMetadata | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const md = raw as Record<string, unknown>;
  const thread = (md.thread_metadata ?? {}) as Record<string, unknown>;
  const viewer = (md.viewer_metadata ?? {}) as Record<string, unknown>;
  if (typeof md.id !== 'string') return undefined;
  const name = textOf(md.name) ?? textOf(thread.name) ?? '';
  const description = textOf(md.description) ?? textOf(thread.description);
  const invite =
    typeof md.invite === 'string' ? md.invite : typeof thread.invite === 'string' ? thread.invite : undefined;
  const subscribers = Number(md.subscribers ?? thread.subscribers_count);
  const role = typeof viewer.role === 'string' ? ROLES[viewer.role.toUpperCase()] : undefined;
  const mute = md.mute_state ?? viewer.mute;
  return {
    channelId: md.id,
    name,
    ...(description ? { description } : {}),
    ...(invite ? { inviteCode: invite } : {}),
    ...(Number.isFinite(subscribers) ? { subscribers } : {}),
    ...(role ? { role } : {}),
    muted: typeof mute === 'string' && mute.toUpperCase() === 'ON',
  };
}

/**
 * newsletter-settings.update: a new name or description, in WhatsApp's MEX shape (`{ name: { text } }`) or Baileys'
 * own (`{ name }`); undefined when it changes neither (a picture, reaction settings).
 */
export function reportOfChannelSettings(update: { id: string; update: unknown }): ChannelReport | undefined {
  if (!isChannelId(update.id) || typeof update.update !== 'object' || update.update === null) return undefined;
  const settings = update.update as Record<string, unknown>;
  const name = textOf(settings.name);
  const description = textOf(settings.description);
  if (!name && description === undefined) return undefined;
  return {
    kind: 'settings',
    channelId: update.id,
    ...(name ? { name } : {}),
    ...(description === undefined ? {} : { description }),
  };
}

/**
 * newsletter.reaction: Baileys names the post by the id the notification gives, a server id or the post's own id;
 * mapped back to the waMessageId this connection learned for it, else taken as it is.
 */
export function reportOfChannelReaction(
  update: { id: string; server_id: string; reaction: { code?: string; removed?: boolean } },
  posts: Pick<ChannelPostIds, 'waMessageIdOf'> | undefined,
): ChannelReport | undefined {
  const removed = update.reaction.removed === true;
  const emoji = update.reaction.code ?? '';
  if (!isChannelId(update.id) || !update.server_id || (emoji === '' && !removed)) return undefined;
  const waMessageId = posts?.waMessageIdOf(update.id, update.server_id) ?? update.server_id;
  return { kind: 'reaction', channelId: update.id, waMessageId, emoji, removed };
}

/** newsletter-participants.update: the participant's new role (a promotion to admin, a demotion), when it says. */
export function roleOfChannelParticipant(update: { new_role?: string; action?: string }): ChannelRole | undefined {
  const role = ROLES[String(update.new_role ?? '').toUpperCase()];
  return role ?? (update.action === 'demote' ? 'subscriber' : undefined);
}

const childrenOf = (node: BinaryNode): BinaryNode[] => (Array.isArray(node.content) ? node.content : []);

/** Every `message` node under the answer of newsletterFetchMessages (`<messages><message …>`), at any depth. */
function messageNodesOf(node: BinaryNode): BinaryNode[] {
  if (node.tag === 'message') return [node];
  return childrenOf(node).flatMap(messageNodesOf);
}

/** A post of the fetched page: its content (plaintext protobuf) read as an inbound message is, and its reactions. */
export function postOf(channelId: string, node: BinaryNode): ChannelPost | undefined {
  const id = node.attrs.id ?? node.attrs.server_id;
  const plaintext = childrenOf(node).find((child) => child.tag === 'plaintext');
  if (!id || !(plaintext?.content instanceof Uint8Array)) return undefined;
  const timestamp = Number(node.attrs.t ?? 0);
  const message = {
    key: { remoteJid: channelId, fromMe: false, id },
    message: proto.Message.decode(plaintext.content),
    messageTimestamp: timestamp,
  } as WAMessage;
  const inbound = inboundMessageOf(message, channelId);
  if (!inbound) return undefined;
  const reactions: Record<string, number> = {};
  for (const reaction of childrenOf(
    childrenOf(node).find((child) => child.tag === 'reactions') ?? { tag: '', attrs: {} },
  )) {
    const code = reaction.attrs.code;
    const count = Number(reaction.attrs.count ?? 0);
    if (code && count > 0) reactions[code] = (reactions[code] ?? 0) + count;
  }
  return {
    waMessageId: id,
    type: inbound.type,
    ...(inbound.body ? { body: inbound.body } : {}),
    timestamp: inbound.timestamp,
    reactions,
  };
}

function channelError(error: unknown, doing: string, channelId?: string): EngineError {
  if (error instanceof EngineError) return error;
  const message = `${doing}: ${(error as Error)?.message ?? String(error)}`;
  const data = (error as { data?: unknown } | null)?.data;
  switch (typeof data === 'number' ? data : statusCodeOf(error)) {
    case 401:
    case 403:
      return new EngineError(
        'not_channel_admin',
        channelId ? `the account is not an owner or admin of the channel ${channelId}` : message,
        true,
      );
    case 404:
      return new EngineError('channel_not_found', channelId ? `no channel ${channelId}` : message, true);
    case 428:
    case 408:
      return new EngineError('not_connected', message);
    default:
      return new EngineError('engine_error', message);
  }
}

export function baileysChannelOperations(
  socket: BaileysChannelSocket,
  requireOnline: () => void,
  postIds = new ChannelPostIds(),
): ChannelOperations {
  const run = async <T>(doing: string, channelId: string | undefined, call: () => Promise<T>): Promise<T> => {
    requireOnline();
    try {
      return await call();
    } catch (error) {
      throw channelError(error, doing, channelId);
    }
  };
  /** Metadata by jid or invite code; null when WhatsApp knows none (an empty answer, or 404). */
  const metadata = async (type: 'jid' | 'invite', key: string): Promise<ChannelMetadata | null> => {
    try {
      return (
        channelOf(await run(`reading the channel ${key}`, undefined, () => socket.newsletterMetadata(type, key))) ??
        null
      );
    } catch (error) {
      if (error instanceof EngineError && error.code === 'channel_not_found') return null;
      throw error;
    }
  };
  /** The newest `count` posts, each with its server id learned. */
  const fetchPosts = async (channelId: string, count: number): Promise<ChannelPost[]> => {
    const answer = (await run(`reading the posts of ${channelId}`, channelId, () =>
      socket.newsletterFetchMessages(channelId, count, 0, 0),
    )) as BinaryNode | undefined;
    return (answer ? messageNodesOf(answer) : []).flatMap((node) => {
      const post = postOf(channelId, node);
      if (post && node.attrs.server_id) postIds.learn(channelId, post.waMessageId, node.attrs.server_id);
      return post ?? [];
    });
  };
  return {
    async create(name, description) {
      const created = await run('creating a channel', undefined, () => socket.newsletterCreate(name, description));
      const channel = channelOf(created);
      if (!channel) throw new EngineError('engine_error', 'WhatsApp answered the new channel without its id');
      return channel;
    },
    metadata: (channelId) => metadata('jid', channelId),
    resolve: (code) => metadata('invite', code),
    async follow(channelId) {
      await run(`following ${channelId}`, channelId, () => socket.newsletterFollow(channelId));
    },
    async unfollow(channelId) {
      await run(`unfollowing ${channelId}`, channelId, () => socket.newsletterUnfollow(channelId));
    },
    async update(channelId, change) {
      if (change.name !== undefined) {
        const name = change.name;
        await run(`renaming ${channelId}`, channelId, () => socket.newsletterUpdateName(channelId, name));
      }
      if (change.description !== undefined) {
        const description = change.description;
        await run(`describing ${channelId}`, channelId, () =>
          socket.newsletterUpdateDescription(channelId, description),
        );
      }
      if (change.muted !== undefined)
        await run(`muting ${channelId}`, channelId, () =>
          change.muted ? socket.newsletterMute(channelId) : socket.newsletterUnmute(channelId),
        );
    },
    async messages(channelId, limit, cursor) {
      // Baileys asks for the newest `count` posts and nothing older: there is one page (no `next`).
      if (cursor !== undefined)
        throw new EngineError('invalid_cursor', 'this engine gives out no further pages of a channel', true);
      const posts = await fetchPosts(channelId, limit);
      posts.sort((a, b) => b.timestamp - a.timestamp);
      return { items: posts.slice(0, limit) };
    },
    async react(channelId, waMessageId, emoji) {
      let serverId = postIds.serverIdOf(channelId, waMessageId);
      if (serverId === undefined) {
        await fetchPosts(channelId, POSTS_SEARCHED);
        serverId = postIds.serverIdOf(channelId, waMessageId);
      }
      if (serverId === undefined)
        throw new EngineError(
          'channel_post_not_found',
          `none of the newest ${POSTS_SEARCHED} posts of ${channelId} is ${waMessageId}`,
          true,
        );
      const target = serverId;
      await run(`reacting to ${waMessageId} of ${channelId}`, channelId, () =>
        socket.newsletterReactMessage(channelId, target, emoji === '' ? undefined : emoji),
      );
    },
  };
}
