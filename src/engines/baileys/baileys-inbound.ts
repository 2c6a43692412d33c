/**
 * The inbound side of a Baileys connection: what the socket emits (messages, receipts, contacts, presence,
 * calls, group changes) mapped to the engine's callbacks (EngineEvents), in the order Baileys emitted it.
 */
import { isStatusChat } from '../../status/status-chat.js';
import { isChannelId } from '../../channels/channel-id.js';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  type BaileysEventMap,
  type WAMessage,
  decryptPollVote,
  jidNormalizedUser,
  normalizeMessageContent,
} from 'baileys';
import type { OwnChatChanges } from './own-chat-changes.js';
import type { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type {
  ChannelReport,
  ChatActivity,
  EngineEvents,
  GroupReport,
  HistoryChunk,
  IdentityPair,
  InboundMessage,
  LinkedAccount,
} from '../engine.js';
import type { ReceivedMessage } from '../../messages/message-events.js';
import type { PresenceState } from '../../messages/message-events.js';
import type { DeviceSettings } from '../../settings/settings-events.js';
import type { StoreAuthState } from './auth/store-auth-state.js';
import type { BaileysSocket } from './baileys-socket.js';
import {
  activitiesOfChatDeletes,
  activitiesOfChatUpdates,
  activitiesOfMessageDeletes,
  activitiesOfStars,
  activityOfLabelAssociation,
  activityOfLabelEdit,
} from './chats.js';
import {
  type ChannelPostIds,
  reportOfChannelReaction,
  reportOfChannelSettings,
  roleOfChannelParticipant,
} from './channels.js';
import { contactsOf } from './contacts.js';
import { carriesMessages, isFinal, syncIdOf } from './history.js';
import { identitiesOfKey, identityOf } from './identities.js';
import {
  groupMetadataOf,
  reportOfJoinRequest,
  reportsOfEphemeralChanges,
  reportOfParticipantsUpdate,
  reportsOfGroupUpdates,
} from './groups.js';
import { inboundMessageOf, protocolChangeOf, referencesOf } from './inbound-message.js';
import { digitsOfLid, isGroupJid, isLidUser, isSupportedChat, phoneOfJid } from './jid.js';
import { type ReceiptOfJid, receiptsOfMessageUpdates, receiptsOfUserReceipts } from './receipts.js';

export type PollLookup = (
  deviceId: string,
  pollMessageId: string,
) => Promise<{ options: string[]; secret: string } | undefined>;
/** `dispatcher`: the device's proxy for fetch (undici), when it has one. */
export type MediaDownloader = (
  message: WAMessage,
  socket: BaileysSocket,
  logger: Logger,
  dispatcher?: unknown,
) => Promise<Readable>;

/** Baileys' presence names → the gateway's. */
const PRESENCE_OF: Readonly<Record<string, PresenceState>> = {
  available: 'available',
  unavailable: 'unavailable',
  composing: 'typing',
  recording: 'recording',
  paused: 'paused',
};

const defaultDownloader: MediaDownloader = async (message, socket, logger, dispatcher) => {
  const { downloadMediaMessage } = await import('baileys');
  // Baileys fetches with these options: a dispatcher sends the download through the device's proxy.
  const options = dispatcher ? { options: { dispatcher } as RequestInit } : {};
  return downloadMediaMessage(message, 'stream', options, {
    logger,
    reuploadRequest: socket.updateMediaMessage?.bind(socket) ?? (async (m: WAMessage) => m),
  });
};

/** What the inbound side needs of its connection. */
export interface InboundDependencies {
  deviceId: string;
  socket: BaileysSocket;
  auth: StoreAuthState;
  events: EngineEvents;
  settings: { polls?: PollLookup; downloadMedia?: MediaDownloader };
  logger: Logger;
  /** The device's proxy for media downloads (an undici dispatcher). */
  mediaDispatcher?: unknown;
  /** The device's settings now (whether calls are rejected, and with which message). */
  settingsOf?(): Pick<DeviceSettings, 'rejectCalls' | 'rejectCallsMessage'> | undefined;
  /** The ids the connection sent and their recipients (baileys-outbound.ts fills it). */
  sent: Pick<LRUCache<string, string>, 'has' | 'get'>;
  /** The chat changes this connection made: their local echoes are not the phone's (own-chat-changes.ts). */
  ownChatChanges?: Pick<OwnChatChanges, 'withoutEchoes'>;
  /** Channel posts' server ids (channels.ts): a received post's is learned, reactions and views name it. */
  channelPosts?: ChannelPostIds;
  linkedAccount(): LinkedAccount | undefined;
  /** Rejects a call and tells the caller `message`; answers whether the call was rejected. */
  rejectCall(callId: string, callerJid: string, message: string | null | undefined): Promise<boolean>;
  /** Runs an actor callback so that one that throws is logged, not thrown into Baileys' event loop. */
  safely(what: string, callback: () => void): void;
}

export class BaileysInbound {
  /**
   * Inbound messages and receipts are reported in the order Baileys emitted them (a LID sender needs an
   * async lookup first). They are data, not state: one that arrived just before a close may be reported
   * after `disconnected`.
   */
  private reportChain: Promise<void> = Promise.resolve();

  constructor(private readonly deps: InboundDependencies) {}

  /** Resolves once every report queued so far is made (the chain never rejects: a failure is logged). */
  settled(): Promise<void> {
    return this.reportChain;
  }

  /** Listens to the socket's data events (the connection listens to its lifecycle). */
  listen(): void {
    const { socket } = this.deps;
    socket.ev.on('messages.upsert', (upsert) => this.onMessagesUpsert(upsert));
    socket.ev.on('messaging-history.set', (set) => {
      if (carriesMessages(set)) this.enqueueReport(() => this.reportHistory(set), 'history');
    });
    socket.ev.on('messages.update', (updates) => this.reportReceipts(receiptsOfMessageUpdates(updates, nowSeconds())));
    socket.ev.on('message-receipt.update', (updates) =>
      this.reportReceipts(receiptsOfUserReceipts(updates, nowSeconds())),
    );
    socket.ev.on('contacts.upsert', (contacts) => this.reportContacts(contacts));
    socket.ev.on('contacts.update', (contacts) => this.reportContacts(contacts));
    socket.ev.on('lid-mapping.update', (mapping) => this.reportIdentities([identityOf(mapping.pn, mapping.lid)]));
    socket.ev.on('presence.update', (update) => this.onPresence(update));
    socket.ev.on('call', (calls) => this.onCalls(calls));
    socket.ev.on('groups.upsert', (groups) => {
      for (const group of groups) this.reportGroup({ kind: 'metadata', group: groupMetadataOf(group) });
    });
    socket.ev.on('groups.update', (updates) => {
      for (const report of reportsOfGroupUpdates(updates)) this.reportGroup(report);
    });
    // Chat changes made on the phone or another linked device (app-state sync).
    socket.ev.on('chats.update', (updates) => this.reportChatChanges(activitiesOfChatUpdates(updates)));
    socket.ev.on('chats.delete', (ids) => this.reportChatChanges(activitiesOfChatDeletes(ids)));
    socket.ev.on('messages.delete', (deletion) => this.reportChatChanges(activitiesOfMessageDeletes(deletion)));
    socket.ev.on('messages.update', (updates) => this.reportChatChanges(activitiesOfStars(updates)));
    socket.ev.on('labels.edit', (label) => this.reportLabels(activityOfLabelEdit(label)));
    socket.ev.on('labels.association', (change) => this.reportChatChanges(activityOfLabelAssociation(change)));
    socket.ev.on('group-participants.update', (update) => {
      const report = reportOfParticipantsUpdate(update);
      if (report) this.reportGroup(report);
    });
    socket.ev.on('group.join-request', (update) => {
      const report = reportOfJoinRequest(update);
      if (report) this.reportGroup(report);
    });
    // Followed channels changed elsewhere: a new name or description, a reaction, the account promoted or demoted.
    socket.ev.on('newsletter-settings.update', (update) => {
      const report = reportOfChannelSettings(update);
      if (report) this.enqueueReport(async () => this.reportChannel(report), 'channel change');
    });
    socket.ev.on('newsletter.reaction', (update) => {
      const report = reportOfChannelReaction(update, this.deps.channelPosts);
      if (report) this.enqueueReport(async () => this.reportChannel(report), 'channel reaction');
    });
    socket.ev.on('newsletter-participants.update', (update) =>
      this.enqueueReport(() => this.onChannelParticipant(update), 'channel role'),
    );
    // A group's disappearing-message timer comes as a protocol message Baileys folds into its chat.
    socket.ev.on('chats.update', (updates) => {
      for (const report of reportsOfEphemeralChanges(updates)) this.reportGroup(report);
    });
  }

  /** Only this account's own role is kept (the channels read model holds the account's channels, not their admins). */
  private async onChannelParticipant(update: BaileysEventMap['newsletter-participants.update']): Promise<void> {
    const role = roleOfChannelParticipant(update);
    const me = this.deps.linkedAccount()?.phone;
    if (!role || !isChannelId(update.id) || me === undefined || (await this.phoneOf(update.user)) !== me) return;
    this.reportChannel({ kind: 'role', channelId: update.id, role });
  }

  private reportChannel(report: ChannelReport): void {
    const durable = this.deps.events.channels?.(report);
    if (durable) this.report('channel change', durable);
  }

  private reportGroup(report: GroupReport): void {
    const durable = this.deps.events.groups?.(report);
    if (durable) this.report('group change', durable);
  }

  private onMessagesUpsert({ messages, type }: BaileysEventMap['messages.upsert']): void {
    // 'notify' arrived while connected; 'append' is what WhatsApp kept for us while offline (acknowledged, so
    // never sent again), the echoes of our own sends (skipped below), and notifications without content
    // (group changes, reported as such). History comes as messaging-history.set (reportHistory).
    if (type !== 'notify' && type !== 'append') return;
    for (const message of messages) {
      // Broadcast lists are not reported; statuses are (as status.received), posts of channels too (channel.message).
      const chat = message.key.remoteJid ?? undefined;
      if (!isSupportedChat(chat) && !isStatusChat(chat) && !isChannelId(chat)) continue;
      // Our own sends come back as echoes; messages from the phone or other linked devices are reported.
      if (message.key.fromMe && message.key.id && this.deps.sent.has(message.key.id)) continue;
      this.reportIdentities(identitiesOfKey(message.key));
      this.enqueueReport(() => this.reportMessage(message), 'inbound');
    }
  }

  private async reportMessage(message: WAMessage): Promise<void> {
    const key = message.key;
    const chatJid = key.remoteJid!;
    const isGroup = isGroupJid(chatJid);
    const fromMe = key.fromMe === true;
    const isStatus = isStatusChat(chatJid);
    // A channel's post is the channel's (its followers never see which admin wrote it).
    const isChannel = isChannelId(chatJid);
    // This account's own statuses and channel posts (from the phone) are not someone's received.
    if (isChannel && key.id && key.server_id) this.deps.channelPosts?.learn(chatJid, key.id, key.server_id);
    if ((isStatus || isChannel) && fromMe) return;
    const chatId = isGroup || isStatus || isChannel ? chatJid : await this.chatIdOf(chatJid, key.remoteJidAlt);
    const participant =
      (isGroup || isStatus) && !fromMe && key.participant
        ? await this.chatIdOf(key.participant, key.participantAlt)
        : undefined;
    const from = fromMe ? (this.deps.linkedAccount()?.phone ?? '') : (participant ?? (isStatus ? undefined : chatId));
    if (!chatId || !from) {
      this.deps.logger.warn({ waMessageId: key.id }, 'inbound message from an unknown sender dropped');
      return;
    }
    const change = protocolChangeOf(message);
    if (change && isStatus) return; // a status taken down: nothing to report
    if (change) {
      const base = {
        id: change.id,
        chatId,
        from,
        ...(fromMe ? { fromMe } : {}),
        waMessageId: change.targetId,
        timestamp: change.timestamp,
      };
      this.reportActivity(
        change.kind === 'edited' ? { kind: 'edited', ...base, body: change.body } : { kind: 'revoked', ...base },
      );
      return;
    }
    if (normalizeMessageContent(message.message)?.pollUpdateMessage) {
      await this.reportVote(message, chatId, from);
      return;
    }
    const inbound = inboundMessageOf(message, from);
    if (!inbound) return;
    const references = referencesOf(message);
    const mentions = await Promise.all(references.mentionedJids.map((jid) => this.chatIdOf(jid)));
    const quotedFrom = references.quotedSenderJid ? await this.chatIdOf(references.quotedSenderJid) : undefined;
    const reported: InboundMessage = {
      ...inbound,
      chatId,
      isGroup,
      fromMe,
      ...(participant && !isStatus ? { participant } : {}),
      ...(inbound.quoted ? { quoted: { ...inbound.quoted, from: quotedFrom ?? (inbound.quoted.from || chatId) } } : {}),
      ...(mentions.length > 0 ? { mentions: mentions.filter((m): m is string => !!m) } : {}),
    };
    if (inbound.media) {
      const download = this.deps.settings.downloadMedia ?? defaultDownloader;
      reported.downloadMedia = () => download(message, this.deps.socket, this.deps.logger, this.deps.mediaDispatcher);
    }
    this.report('inbound', this.deps.events.inbound(reported));
  }

  /**
   * A chunk of the account's history: its messages as received messages of their chats (no media download, no
   * `message.received`: the inbox records them as HistoryImported), the chats' names, and how far the sync got.
   * Edits, revokes, votes, statuses and chats the gateway does not support are left out.
   */
  private async reportHistory(set: BaileysEventMap['messaging-history.set']): Promise<void> {
    const { events } = this.deps;
    if (!events.history) return;
    const chats: HistoryChunk['chats'] = [];
    for (const chat of set.chats) {
      if (!isSupportedChat(chat.id)) continue;
      const chatId = await this.chatIdOf(chat.id);
      const name = chat.name ?? undefined;
      if (chatId) chats.push({ chatId, ...(name ? { name } : {}) });
    }
    const messages: ReceivedMessage[] = [];
    for (const message of set.messages) {
      const key = message.key;
      if (!isSupportedChat(key.remoteJid) || protocolChangeOf(message)) continue;
      if (normalizeMessageContent(message.message)?.pollUpdateMessage) continue;
      const isGroup = isGroupJid(key.remoteJid);
      const fromMe = key.fromMe === true;
      const chatId = isGroup ? key.remoteJid : await this.chatIdOf(key.remoteJid, key.remoteJidAlt);
      const participant =
        isGroup && !fromMe && key.participant ? await this.chatIdOf(key.participant, key.participantAlt) : undefined;
      const from = fromMe ? (this.deps.linkedAccount()?.phone ?? '') : (participant ?? chatId);
      if (!chatId || !from) continue;
      const inbound = inboundMessageOf(message, from);
      if (!inbound) continue;
      messages.push({ ...inbound, chatId, isGroup, fromMe, ...(participant ? { participant } : {}) });
    }
    if (messages.length === 0 && chats.length === 0) return;
    const progress = typeof set.progress === 'number' ? { progress: set.progress } : {};
    this.report(
      'history',
      events.history({ syncId: syncIdOf(set), chats, messages, ...progress, final: isFinal(set) }),
    );
  }

  /**
   * A poll vote, decrypted with the poll's message secret (kept by the gateway when the poll was sent
   * or received). The HMAC names the poll's creator and the voter: ours may be our phone JID or our LID.
   */
  private async reportVote(message: WAMessage, chatId: string, from: string): Promise<void> {
    const update = normalizeMessageContent(message.message)!.pollUpdateMessage!;
    const pollKey = update.pollCreationMessageKey;
    const pollId = pollKey?.id;
    const poll = pollId ? await this.deps.settings.polls?.(this.deps.deviceId, pollId) : undefined;
    if (!pollId || !poll || !update.vote) {
      this.deps.logger.warn({ pollId }, 'a vote for a poll this device does not know was dropped');
      return;
    }
    const me = this.deps.auth.state.creds.me;
    const mine = [me?.id, me?.lid].filter((jid): jid is string => !!jid).map((jid) => jidNormalizedUser(jid));
    const authors = (key: {
      fromMe?: boolean | null;
      participant?: string | null;
      remoteJid?: string | null;
      participantAlt?: string | null;
      remoteJidAlt?: string | null;
    }) =>
      key.fromMe
        ? mine
        : [key.participant, key.participantAlt, key.remoteJid, key.remoteJidAlt]
            .filter((jid): jid is string => !!jid)
            .map((jid) => jidNormalizedUser(jid));
    const pollEncKey = Buffer.from(poll.secret, 'base64');
    for (const pollCreatorJid of authors(pollKey)) {
      for (const voterJid of authors(message.key)) {
        let selected: Uint8Array[];
        try {
          selected =
            decryptPollVote(update.vote, { pollCreatorJid, pollMsgId: pollId, pollEncKey, voterJid }).selectedOptions ??
            [];
        } catch {
          continue; // not this pair of JIDs
        }
        const byHash = new Map(
          poll.options.map((option) => [createHash('sha256').update(option).digest('hex'), option]),
        );
        const selectedOptions = selected
          .map((hash) => byHash.get(Buffer.from(hash).toString('hex')))
          .filter((o): o is string => o !== undefined);
        const timestamp = Math.floor(Number(update.senderTimestampMs ?? 0) / 1000) || nowSeconds();
        this.reportActivity({
          kind: 'poll_vote',
          id: message.key.id ?? undefined,
          chatId,
          from,
          pollMessageId: pollId,
          selectedOptions,
          timestamp,
        });
        return;
      }
    }
    this.deps.logger.warn({ pollId }, 'a poll vote could not be decrypted');
  }

  private onPresence({ id, presences }: BaileysEventMap['presence.update']): void {
    this.enqueueReport(async () => {
      const chatId = isGroupJid(id) ? id : await this.chatIdOf(id);
      if (!chatId) return;
      for (const [participantJid, presence] of Object.entries(presences)) {
        const state = presence.lastKnownPresence ? PRESENCE_OF[presence.lastKnownPresence] : undefined;
        const from = await this.chatIdOf(participantJid);
        const lastSeen =
          state === 'unavailable' && typeof presence.lastSeen === 'number' && presence.lastSeen > 0
            ? new Date(presence.lastSeen * 1000).toISOString()
            : undefined;
        if (state && from)
          this.reportActivity({ kind: 'presence', chatId, from, state, ...(lastSeen ? { lastSeen } : {}) });
      }
    }, 'presence');
  }

  private onCalls(calls: BaileysEventMap['call']): void {
    for (const call of calls) {
      if (call.status !== 'offer') continue; // one event per call: when it rings
      const timestamp = Math.floor((call.date instanceof Date ? call.date.getTime() : Date.now()) / 1000);
      const report = (rejected: boolean) => async () => {
        const from = await this.chatIdOf(call.from);
        if (!from) return;
        this.reportActivity({
          kind: 'call',
          callId: call.id,
          from,
          isVideo: call.isVideo === true,
          isGroup: call.isGroup === true,
          rejected,
          timestamp,
        });
      };
      const settings = this.deps.settingsOf?.();
      if (!settings?.rejectCalls || !this.deps.socket.rejectCall) {
        this.enqueueReport(report(false), 'call');
        continue;
      }
      // Rejecting is a round trip to WhatsApp: made beside the report queue, which would otherwise hold back
      // every message and receipt behind it; the call is reported once the outcome is known.
      void this.deps
        .rejectCall(call.id, call.from, settings.rejectCallsMessage)
        .then((rejected) => this.enqueueReport(report(rejected), 'call'));
    }
  }

  private reportReceipts(receipts: ReceiptOfJid[]): void {
    for (const { recipientJid, ...receipt } of receipts) {
      this.enqueueReport(async () => {
        const recipient = this.deps.sent.get(receipt.waMessageId) || (await this.phoneOf(recipientJid));
        if (recipient) this.report('receipt', this.deps.events.receipt({ ...receipt, recipient }));
      }, 'receipt');
    }
  }

  private reportContacts(entries: BaileysEventMap['contacts.update']): void {
    // A contact entry may carry both forms (`id` a LID with its `phoneNumber`, or a number with its `lid`).
    this.reportIdentities(entries.map((entry) => identityOf(entry.id, entry.phoneNumber ?? entry.lid)));
    const contacts = contactsOf(entries);
    if (contacts.length > 0)
      this.deps.safely('contacts', () => this.report('contacts', this.deps.events.contacts(contacts)));
  }

  /** LID ↔ number pairs, on the contacts' way (the recorder keeps only new ones). */
  private reportIdentities(pairs: ReadonlyArray<IdentityPair | undefined>): void {
    const known = pairs.filter((pair): pair is IdentityPair => pair !== undefined);
    if (known.length > 0 && this.deps.events.identities)
      this.deps.safely('identities', () => this.report('identities', this.deps.events.identities!(known)));
  }

  /**
   * WhatsApp has its acknowledgement already (Baileys sends the receipt before it emits the message), so
   * the actor keeps the report until the store takes it; not waited for here, so that a store outage does
   * not stall Baileys' events. It rejects only when the actor stops first.
   */
  private report(what: string, durable: Promise<void>): void {
    durable.catch((error: unknown) =>
      this.deps.logger.warn({ err: error }, `the ${what} was not recorded before the session stopped`),
    );
  }

  /** Chat changes whose `chatId` is still a JID: mapped to chat ids (in order, after what came before), then reported. */
  private reportChatChanges(reported: ChatActivity[]): void {
    const activities = this.deps.ownChatChanges?.withoutEchoes(reported) ?? reported;
    for (const activity of activities) {
      if (!('chatId' in activity) || !isSupportedChat(activity.chatId)) continue;
      const jid = activity.chatId;
      this.enqueueReport(async () => {
        const chatId = await this.chatIdOf(jid);
        if (chatId) this.reportActivity({ ...activity, chatId });
      }, 'chat change');
    }
  }

  /** Labels belong to no chat: reported in turn with the chat changes, without a chat to map. */
  private reportLabels(reported: ChatActivity[]): void {
    const activities = this.deps.ownChatChanges?.withoutEchoes(reported) ?? reported;
    for (const activity of activities) this.enqueueReport(async () => this.reportActivity(activity), 'label change');
  }

  private reportActivity(activity: ChatActivity): void {
    const durable = this.deps.events.activity?.(activity);
    if (durable) this.report('activity', durable);
  }

  private enqueueReport(task: () => Promise<void>, what: string): void {
    this.reportChain = this.reportChain
      .then(task)
      .catch((error: unknown) => this.deps.logger.error({ err: error }, `reporting ${what} failed`));
  }

  /** Phone digits of a JID; a LID is looked up in the LID ↔ phone mapping Baileys keeps. */
  private async phoneOf(jid: string, alternative?: string | null): Promise<string | undefined> {
    const direct = phoneOfJid(jid) ?? phoneOfJid(alternative);
    if (direct || !isLidUser(jid)) return direct;
    const mapped = await this.deps.socket.signalRepository.lidMapping.getPNForLID(jid).catch(() => null);
    return phoneOfJid(mapped);
  }

  /**
   * The chat id of a user JID: the phone digits, resolved through the LID mapping when WhatsApp hides
   * the number; failing that `<digits>@lid`, never the LID's digits as if they were a phone number.
   */
  private async chatIdOf(jid: string, alternative?: string | null): Promise<string | undefined> {
    if (isGroupJid(jid)) return jid;
    const phone = await this.phoneOf(jid, alternative);
    if (phone) return phone;
    const lid = digitsOfLid(jid);
    return lid === undefined ? undefined : `${lid}@lid`;
  }
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
