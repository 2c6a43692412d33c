/**
 * The /channels routes (WhatsApp channels, i.e. newsletters): the account's channels, read from the channels read
 * model and changed through the channels stream's writer (src/channels/channel-commands.ts); a channel's posts
 * and channels the account does not follow are asked of the network (need an online session). Posting is a
 * send: `to: "<channelId>"` on /send/text, /send/image and /send/video.
 */
import type { ChannelCommands } from '../../channels/channel-commands.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { type RouteSpec, defineRoute } from '../route.js';
import { DeviceParams } from '../schemas/common.js';
import {
  ChannelIdSchema,
  ChannelListSchema,
  ChannelMessagePageSchema,
  ChannelMessagesQuery,
  ChannelParams,
  ChannelPostParams,
  ChannelReactionBody,
  ChannelReactionSchema,
  ChannelSchema,
  CreateChannelBody,
  PatchChannelBody,
  ResolveChannelBody,
} from '../schemas/channels.js';
import { NOT_ONLINE } from './responses.js';
import { isSingleEmoji } from '../../outbox/commands/emoji.js';
import { invalidRequest } from '../problem.js';

const tag = 'Channels';
const UNKNOWN = { description: 'No such device, or the account does not own, administer or follow it (`not_found`).' };
const NOT_ADMIN = { description: 'The account is not an owner or admin of the channel (`not_channel_admin`).' };
const ENGINE_FAILED = {
  description: 'The network did not carry out the change (`engine_error`); nothing was recorded, try again.',
};

/** The commands the routes use: with several processes, each served by the device's owner (src/cluster/owner-calls.ts). */
export type ChannelRouteCommands = Pick<
  ChannelCommands,
  'list' | 'get' | 'create' | 'update' | 'follow' | 'unfollow' | 'resolve' | 'messages' | 'react'
>;

export function channelRoutes(channels: ChannelRouteCommands): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/channels',
      operationId: 'listChannels',
      tag,
      summary: 'List the channels the account owns, administers or follows',
      description: "From the gateway's read model of the channels, with the account's role in each.",
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      responses: {
        200: { description: 'The channels, by id.', schema: ChannelListSchema },
        404: { description: 'No such device.' },
      },
      async handler({ params }) {
        return { status: 200, body: { items: await channels.list(params.deviceId) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/channels',
      operationId: 'createChannel',
      tag,
      summary: 'Create a channel',
      description: 'The account owns the new channel. Recorded before the answer.',
      access: 'device',
      scope: 'manage',
      params: DeviceParams,
      body: CreateChannelBody,
      responses: {
        201: { description: 'Created.', schema: ChannelSchema },
        404: { description: 'No such device.' },
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return { status: 201, body: await channels.create(params.deviceId, body.name, body.description) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/channels/resolve',
      operationId: 'resolveChannel',
      tag,
      summary: 'Find a channel by its link',
      description:
        'The channel of `https://whatsapp.com/channel/<code>` (or the code), as the network describes it; `role` only when the account follows it.',
      access: 'device',
      scope: 'read',
      params: DeviceParams,
      body: ResolveChannelBody,
      responses: {
        200: { description: 'The channel.', schema: ChannelSchema },
        404: { description: 'No such device, or no channel has this link (`not_found`).' },
        409: NOT_ONLINE,
      },
      async handler({ params, body }) {
        return { status: 200, body: await channels.resolve(params.deviceId, body.link) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/channels/:channelId',
      operationId: 'getChannel',
      tag,
      summary: 'Read a channel the account owns, administers or follows',
      access: 'device',
      scope: 'read',
      params: ChannelParams,
      responses: { 200: { description: 'The channel.', schema: ChannelSchema }, 404: UNKNOWN },
      async handler({ params }) {
        return { status: 200, body: await channels.get(params.deviceId, params.channelId) };
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/devices/:deviceId/channels/:channelId',
      operationId: 'updateChannel',
      tag,
      summary: 'Rename, describe, mute or unmute a channel',
      description:
        '`name` and `description`: owners and admins only (`403 not_channel_admin`); `muted`: any follower, for this account.',
      access: 'device',
      scope: 'manage',
      params: ChannelParams,
      body: PatchChannelBody,
      responses: {
        200: { description: 'The channel after the change.', schema: ChannelSchema },
        403: NOT_ADMIN,
        404: UNKNOWN,
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        return { status: 200, body: await channels.update(params.deviceId, params.channelId, body) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/devices/:deviceId/channels/:channelId/follow',
      operationId: 'followChannel',
      tag,
      summary: 'Follow a channel',
      description: 'Its new posts then arrive as `channel.message`. Following one already followed changes nothing.',
      access: 'device',
      scope: 'manage',
      params: ChannelParams,
      responses: {
        200: { description: 'The channel, followed.', schema: ChannelSchema },
        404: { description: 'No such device, or the network knows no such channel (`not_found`).' },
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        return { status: 200, body: await channels.follow(params.deviceId, params.channelId) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/devices/:deviceId/channels/:channelId/follow',
      operationId: 'unfollowChannel',
      tag,
      summary: 'Stop following a channel',
      description: 'A channel not followed changes nothing.',
      access: 'device',
      scope: 'manage',
      params: ChannelParams,
      responses: {
        200: { description: 'No longer followed.', schema: ChannelIdSchema },
        404: { description: 'No such device.' },
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params }) {
        await channels.unfollow(params.deviceId, params.channelId);
        return { status: 200, body: { channelId: params.channelId } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/devices/:deviceId/channels/:channelId/messages',
      operationId: 'listChannelMessages',
      tag,
      summary: "A channel's posts with their reactions",
      description: 'Newest first, as the network keeps them (with how many reacted with each emoji).',
      access: 'device',
      scope: 'read',
      params: ChannelParams,
      query: ChannelMessagesQuery,
      responses: {
        200: { description: 'A page of posts.', schema: ChannelMessagePageSchema },
        404: { description: 'No such device, or the network knows no such channel (`not_found`).' },
        409: NOT_ONLINE,
      },
      async handler({ params, query }) {
        const page = await channels.messages(
          params.deviceId,
          params.channelId,
          query.limit ?? 20,
          decodeCursor(query.cursor),
        );
        return {
          status: 200,
          body: { items: page.items, nextCursor: page.next === undefined ? null : encodeCursor(page.next) },
        };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/devices/:deviceId/channels/:channelId/messages/:waMessageId/reaction',
      operationId: 'reactToChannelMessage',
      tag,
      summary: "React to a channel's post",
      description:
        'This account\'s reaction to the post (any follower may react; `""` takes it back). Made on the network, which counts it in GET …/messages; a reaction is not a message, so it is not queued.',
      access: 'device',
      scope: 'send',
      params: ChannelPostParams,
      body: ChannelReactionBody,
      responses: {
        200: { description: 'The reaction, as the network took it.', schema: ChannelReactionSchema },
        404: { description: 'No such device, or the network knows no such channel or post (`not_found`).' },
        409: NOT_ONLINE,
        502: ENGINE_FAILED,
      },
      async handler({ params, body }) {
        if (body.emoji !== '' && !isSingleEmoji(body.emoji))
          throw invalidRequest('body/emoji must be one emoji, or "" to take the reaction back', [
            { path: '/emoji', message: 'must be one emoji or ""' },
          ]);
        const { deviceId, channelId, waMessageId } = params;
        await channels.react(deviceId, channelId, waMessageId, body.emoji);
        return { status: 200, body: { channelId, waMessageId, emoji: body.emoji } };
      },
    }),
  ];
}
