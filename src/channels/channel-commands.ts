/**
 * The channels (newsletters) of a device's account (the /channels routes), all through the one writer of
 * `channels-<deviceId>`. A change is checked against the stream's state, made on the network, then recorded
 * before the answer, as the groups' are. The list and a followed channel are read from the channels read model;
 * a channel's posts and anything about channels the account does not follow are asked of the network.
 */
import { CommandHandler } from '../commands/command-handler.js';
import { DomainError, sessionNotOnline } from '../errors/domain-error.js';
import { type EngineRefusals, translatingEngineFailures } from '../engines/engine-failure.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { ReadModelProgress } from '../projections/projection-runner.js';
import {
  type ChannelChange,
  type ChannelEvent,
  type ChannelMetadata,
  type ChannelReport,
  channelsStream,
} from './channel-events.js';
import { channelCodeOf, channelLink } from './channel-id.js';
import type { ChannelOperations, ChannelPage } from './channel-operations.js';
import {
  type ChannelsCommand,
  type ChannelsState,
  channelsDecider,
  requireChannel,
  requireChannelAdmin,
  unknownChannel,
} from './channels-decider.js';
import type { ChannelView, ChannelsReadModel } from './channels-read-model.js';

export interface ChannelCommandsDeps {
  store: EventStore;
  channels: ChannelsReadModel;
  projections: ReadModelProgress;
  /** The live connection's channel operations, while the session is online. */
  operations(deviceId: string): ChannelOperations | undefined;
  /** The session's state as this process knows it, for the words of a refusal. */
  sessionState?(deviceId: string): string | undefined;
}

export class ChannelCommands {
  private readonly handler: CommandHandler<ChannelsState, ChannelsCommand, ChannelEvent>;

  constructor(private readonly deps: ChannelCommandsDeps) {
    this.handler = new CommandHandler({ store: deps.store, decider: channelsDecider, cacheSize: 1_000 });
  }

  async list(deviceId: string): Promise<ChannelView[]> {
    return this.deps.channels.list(deviceId);
  }

  /** A channel the account owns, administers or follows. */
  async get(deviceId: string, channelId: string): Promise<ChannelView> {
    const channel = this.deps.channels.get(deviceId, channelId);
    if (!channel) throw unknownChannel(channelId);
    return channel;
  }

  async create(deviceId: string, name: string, description?: string): Promise<ChannelView> {
    const operations = this.online(deviceId);
    const created = await operations.create(name, description);
    await this.record(deviceId, {
      type: 'RecordChannel',
      deviceId,
      channel: { ...created, role: 'owner', muted: false },
      reason: 'created',
    });
    return await this.get(deviceId, created.channelId);
  }

  /** Name and description: owners and admins (`403 not_channel_admin`); muted: the account's own setting. */
  async update(deviceId: string, channelId: string, change: ChannelChange): Promise<ChannelView> {
    const operations = this.online(deviceId);
    const state = await this.state(deviceId);
    requireChannel(state, channelId);
    if (change.name !== undefined || change.description !== undefined) requireChannelAdmin(state, channelId);
    await operations.update(channelId, change);
    await this.record(deviceId, { type: 'RecordUpdate', deviceId, channelId, change });
    return await this.get(deviceId, channelId);
  }

  /** Follows a channel (unknown: 404); following one already followed changes nothing. */
  async follow(deviceId: string, channelId: string): Promise<ChannelView> {
    const operations = this.online(deviceId);
    const known = (await this.state(deviceId)).channels[channelId];
    if (known) return await this.get(deviceId, channelId);
    const channel = await operations.metadata(channelId);
    if (!channel) throw new DomainError('not_found', `the network knows no channel ${channelId}`);
    await operations.follow(channelId);
    await this.record(deviceId, {
      type: 'RecordChannel',
      deviceId,
      channel: { ...channel, role: channel.role ?? 'subscriber', muted: channel.muted === true },
      reason: 'followed',
    });
    return await this.get(deviceId, channelId);
  }

  /** Stops following; a channel not followed changes nothing. */
  async unfollow(deviceId: string, channelId: string): Promise<void> {
    const operations = this.online(deviceId);
    if (!(await this.state(deviceId)).channels[channelId]) return;
    await operations.unfollow(channelId);
    await this.record(deviceId, { type: 'RecordUnfollow', deviceId, channelId });
  }

  /** The channel of a link (`https://whatsapp.com/channel/<code>`) or code: 404 when the network knows none. */
  async resolve(deviceId: string, link: string): Promise<ChannelView> {
    const operations = this.online(deviceId);
    const code = channelCodeOf(link);
    const channel = code === '' ? null : await operations.resolve(code);
    if (!channel) throw new DomainError('not_found', `no channel has the link ${link}`);
    // The network's description is the newest; the role and mute are the account's, as recorded.
    const followed = this.deps.channels.get(deviceId, channel.channelId);
    return {
      ...viewOf(channel, code),
      ...(followed?.role ? { role: followed.role } : {}),
      muted: followed?.muted === true,
    };
  }

  /** A channel's posts with their reactions, newest first, as the network keeps them. */
  async messages(deviceId: string, channelId: string, limit: number, cursor?: string): Promise<ChannelPage> {
    return await this.online(deviceId).messages(channelId, limit, cursor);
  }

  /**
   * This account's reaction to a post (`""` takes it back): made on the network, which keeps the counts (GET
   * …/messages); not recorded here, as the posts are not. A post the network does not have: 404.
   */
  async react(deviceId: string, channelId: string, waMessageId: string, emoji: string): Promise<void> {
    await this.online(deviceId).react(channelId, waMessageId, emoji);
  }

  /**
   * A change the network reported live (a rename by the owner, the account promoted or demoted, a reaction to a
   * post): recorded on the channels stream when it is news about a channel the account follows. Resolves once durable.
   */
  async report(deviceId: string, report: ChannelReport): Promise<void> {
    if (report.kind === 'reaction') {
      const { kind: _kind, ...reaction } = report;
      await this.handler.handle(channelsStream(deviceId), { type: 'RecordReaction', deviceId, ...reaction });
      return;
    }
    const { kind: _kind, channelId, ...change } = report;
    await this.handler.handle(channelsStream(deviceId), { type: 'RecordReported', deviceId, channelId, change });
  }

  /**
   * Reads every recorded channel again from the network (each time the session comes online): a name or role
   * changed by an owner elsewhere, or a channel unfollowed from the phone or gone, is recorded.
   */
  async refresh(deviceId: string): Promise<void> {
    const operations = this.deps.operations(deviceId);
    if (!operations) return;
    for (const channelId of Object.keys((await this.state(deviceId)).channels)) {
      const channel = await operations.metadata(channelId);
      const role = channel?.role;
      await this.record(
        deviceId,
        channel && role
          ? { type: 'RecordChannel', deviceId, channel: { ...channel, role }, reason: 'refreshed' }
          : { type: 'RecordUnfollow', deviceId, channelId },
      );
    }
  }

  private async state(deviceId: string): Promise<ChannelsState> {
    return (await this.handler.load(channelsStream(deviceId))).state;
  }

  /** Appends through the decider and waits until the read model has it (read your writes). */
  private async record(deviceId: string, command: ChannelsCommand): Promise<void> {
    const handled = await this.handler.handle(channelsStream(deviceId), command);
    if (handled.position > 0) await this.deps.projections.settle(handled.position);
  }

  private online(deviceId: string): ChannelOperations {
    const operations = this.deps.operations(deviceId);
    const sessionState = () => this.deps.sessionState?.(deviceId);
    if (!operations) throw sessionNotOnline(sessionState());
    return translatingEngineFailures(operations, sessionState, CHANNEL_REFUSALS);
  }
}

/** What the network's refusals of a channel operation mean here. */
const CHANNEL_REFUSALS: EngineRefusals = {
  channel_not_found: 'not_found',
  channel_post_not_found: 'not_found',
  not_channel_admin: 'not_channel_admin',
  invalid_cursor: 'invalid_request',
};

/** A channel as the network describes it (without the account's role). */
function viewOf(channel: ChannelMetadata, code: string): ChannelView {
  return {
    channelId: channel.channelId,
    name: channel.name,
    ...(channel.description ? { description: channel.description } : {}),
    ...(channel.subscribers === undefined ? {} : { subscribers: channel.subscribers }),
    muted: false,
    inviteLink: channelLink(channel.inviteCode ?? code),
  };
}
