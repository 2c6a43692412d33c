/**
 * One Baileys socket of one device, seen through the engine port: it reports what happened (qr,
 * online, disconnected, inbound, receipts, contacts) and performs what the actor asks. It decides no
 * state; the actor does.
 *
 * Honest state: `online` is reported only on Baileys' `open` (socket open and authenticated), and a
 * connection that stops being alive is reported as disconnected at once, even before Baileys gets round
 * to closing it: a watchdog checks that the WebSocket is still open and that frames keep arriving (Baileys
 * pings every keepAliveIntervalMs and the server answers). Baileys' own keepalive check ends the socket
 * too, but its close then waits for the WebSocket closing handshake, which on a dead network takes up to
 * 30 s; the device must not claim to be online meanwhile.
 */
import { createHash } from 'node:crypto';
import { access, constants } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  type BaileysEventMap,
  type ConnectionState,
  type WAMessage,
  type WAPresence,
  decryptPollVote,
  generateMessageIDV2,
  jidNormalizedUser,
  normalizeMessageContent,
} from 'baileys';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import {
  type ChatActivity,
  type ChatPresence,
  type EngineConnection,
  EngineError,
  type AccountOperations,
  type EngineEvents,
  type GroupOperations,
  type GroupReport,
  type InboundMessage,
  type LinkedAccount,
  type OutgoingMessage,
  type OwnPresence,
} from '../engine.js';
import type { PresenceState } from '../../messages/message-events.js';
import type { BaileysSocket } from './baileys-socket.js';
import { contactsOf } from './contacts.js';
import { describeDisconnect, statusCodeOf } from './disconnect-kind.js';
import { inboundMessageOf, protocolChangeOf, referencesOf } from './inbound-message.js';
import {
  digitsOfLid,
  isGroupJid,
  isLidUser,
  isSupportedChat,
  jidOfChat,
  jidOfPhone,
  normalizedPhoneJid,
  phoneOfJid,
} from './jid.js';
import { type LinkPreviewProvider, outgoingMessageOf } from './outgoing-content.js';
import { type ReceiptOfJid, receiptsOfMessageUpdates, receiptsOfUserReceipts } from './receipts.js';
import type { StoreAuthState } from './auth/store-auth-state.js';
import type { DeviceSettings } from '../../settings/settings-events.js';
import { redactProxyCredentials } from '../../settings/proxy-url.js';
import { type BaileysAccountSocket, baileysAccountOperations } from './account.js';
import {
  type BaileysGroupSocket,
  baileysGroupOperations,
  groupMetadataOf,
  reportOfParticipantsUpdate,
  reportsOfGroupUpdates,
} from './groups.js';

export interface ConnectionSettings {
  keepAliveIntervalMs: number;
  /** How long past a missed keepalive answer the connection still counts as alive. */
  keepAliveGraceMs: number;
  qrTimeoutMs: number;
  /** How long a pairing code is shown before a new one is asked for (default three QR lifetimes). */
  pairingCodeTtlMs?: number;
  /** Ask WhatsApp whether a number exists before the first send to it (permanent error when it does not). */
  verifyRecipients: boolean;
  linkPreview?: LinkPreviewProvider;
  /** How long close() and logout() wait for the socket to finish closing before they go on. */
  closeTimeoutMs: number;
  /** A poll this device sent or received, with what decrypting its votes needs (the gateway's message index). */
  polls?: PollLookup;
  /** Opens a received message's media as a stream; default: Baileys' downloadMediaMessage (tests replace it). */
  downloadMedia?: MediaDownloader;
}

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

const WA_PRESENCE_OF: Readonly<Record<ChatPresence | OwnPresence, WAPresence>> = {
  typing: 'composing',
  recording: 'recording',
  paused: 'paused',
  available: 'available',
  unavailable: 'unavailable',
};

const defaultDownloader: MediaDownloader = async (message, socket, logger, dispatcher) => {
  const { downloadMediaMessage } = await import('baileys');
  // Baileys fetches with these options: a dispatcher sends the download through the device's proxy.
  const options = dispatcher ? { options: { dispatcher } as RequestInit } : {};
  return downloadMediaMessage(message, 'stream', options, {
    logger,
    reuploadRequest: socket.updateMediaMessage ?? (async (m: WAMessage) => m),
  });
};

export interface ConnectionDependencies {
  deviceId: string;
  socket: BaileysSocket;
  auth: StoreAuthState;
  events: EngineEvents;
  settings: ConnectionSettings;
  logger: Logger;
  /** Wipes the device's stored credentials (logged out). */
  wipeCredentials(): Promise<void>;
  /** Called once the connection has ended and its credential writes have landed (or failed). */
  onFinished?(): void;
  /** The proxy the socket goes through (credentials shown as `***`), named when the connection fails. */
  proxyUrl?: string;
  /** The same proxy for media downloads (an undici dispatcher). */
  mediaDispatcher?: unknown;
  /** The device's settings now (whether calls are rejected, and with which message). */
  settingsOf?(): Pick<DeviceSettings, 'rejectCalls' | 'rejectCallsMessage'> | undefined;
}

type Phase = 'connecting' | 'qr' | 'online' | 'ended';

/** Recently sent ids and their recipients: receipts name the chat, reactions need to know who wrote the target. */
const SENT_MEMORY = 5_000;
/** Numbers confirmed to exist and the JID WhatsApp answered for each, so only the first send to a number costs a lookup. */
const KNOWN_RECIPIENTS_MEMORY = 10_000;
/** WhatsApp answers "no picture" as item-not-found and "hidden by privacy settings" as not-authorized. */
const NO_AVATAR_CODES = new Set([401, 404]);

export class BaileysConnection implements EngineConnection {
  private phase: Phase = 'connecting';
  /** close() or logout() was called: the actor knows, so no lifecycle event is reported anymore. */
  private retired = false;
  private lastFrameAt = Date.now();
  private watchdog: NodeJS.Timeout | undefined;
  private readonly socketClosed: Promise<void>;
  private markSocketClosed!: () => void;
  /**
   * Ids this connection sent (filled before the send: Baileys upserts its echo right after relaying it) →
   * the recipient receipts name, or "" for one the receipt itself names (a revoke, a rejected caller's reply).
   */
  private readonly sent = new LRUCache<string, string>({ max: SENT_MEMORY });
  /** Number → the JID WhatsApp resolved it to, which may differ from the number as typed (Brazil's ninth digit). */
  private readonly knownRecipients = new LRUCache<string, string>({ max: KNOWN_RECIPIENTS_MEMORY });
  /**
   * Inbound messages and receipts are reported in the order Baileys emitted them (a LID sender needs an
   * async lookup first). They are data, not state: one that arrived just before a close may be reported
   * after `disconnected`.
   */
  private reportChain: Promise<void> = Promise.resolve();
  private finishing: Promise<void> | undefined;
  readonly groups: GroupOperations | undefined;
  readonly profileOps: AccountOperations | undefined;
  private pairingTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ConnectionDependencies) {
    this.socketClosed = new Promise((resolve) => (this.markSocketClosed = resolve));
    this.groups = hasGroups(deps.socket) ? baileysGroupOperations(deps.socket, () => this.requireOnline()) : undefined;
    this.profileOps = hasAccount(deps.socket)
      ? baileysAccountOperations(
          deps.socket,
          () => this.linkedAccount() ?? { jid: '' },
          () => this.requireOnline(),
        )
      : undefined;
    this.listen();
    this.startWatchdog();
  }

  /** True until the connection has ended (reported as disconnected, or closed by the actor). */
  get isLive(): boolean {
    return this.phase !== 'ended' && !this.retired;
  }

  // ---- reporting ----

  private listen(): void {
    const { socket } = this.deps;
    socket.ws.on('frame', () => {
      this.lastFrameAt = Date.now();
    });
    // Baileys listens for it, so ws raises no error of its own: without this the connection would hang.
    socket.ws.on('unexpected-response', (_request, response) => {
      const answer = `HTTP ${response.statusCode ?? '?'}${response.statusMessage ? ` ${response.statusMessage}` : ''}`;
      this.lost(
        redactProxyCredentials(
          this.deps.proxyUrl
            ? `through the proxy ${this.deps.proxyUrl}: it answered ${answer}`
            : `the server answered ${answer}`,
        ),
      );
    });
    socket.ev.on('connection.update', (update) => this.onConnectionUpdate(update));
    socket.ev.on('creds.update', () => {
      this.deps.auth
        .saveCreds()
        .catch((error: unknown) => this.deps.logger.error({ err: error }, 'saving Baileys credentials failed'));
    });
    socket.ev.on('messages.upsert', (upsert) => this.onMessagesUpsert(upsert));
    socket.ev.on('messages.update', (updates) => this.reportReceipts(receiptsOfMessageUpdates(updates, nowSeconds())));
    socket.ev.on('message-receipt.update', (updates) =>
      this.reportReceipts(receiptsOfUserReceipts(updates, nowSeconds())),
    );
    socket.ev.on('contacts.upsert', (contacts) => this.reportContacts(contacts));
    socket.ev.on('contacts.update', (contacts) => this.reportContacts(contacts));
    socket.ev.on('presence.update', (update) => this.onPresence(update));
    socket.ev.on('call', (calls) => this.onCalls(calls));
    socket.ev.on('groups.upsert', (groups) => {
      for (const group of groups) this.reportGroup({ kind: 'metadata', group: groupMetadataOf(group) });
    });
    socket.ev.on('groups.update', (updates) => {
      for (const report of reportsOfGroupUpdates(updates)) this.reportGroup(report);
    });
    socket.ev.on('group-participants.update', (update) => {
      const report = reportOfParticipantsUpdate(update);
      if (report) this.reportGroup(report);
    });
  }

  private reportGroup(report: GroupReport): void {
    const durable = this.deps.events.groups?.(report);
    if (durable) this.report('group change', durable);
  }

  private onConnectionUpdate(update: Partial<ConnectionState>): void {
    if (update.qr && this.isLive) {
      this.phase = 'qr';
      this.safely('qr', () => this.deps.events.qr(update.qr!, new Date(Date.now() + this.deps.settings.qrTimeoutMs)));
    }
    if (update.connection === 'open' && this.isLive) {
      const account = this.linkedAccount();
      if (!account) {
        // Cannot happen with Baileys (open follows a login with creds.me); never claim online without an account.
        this.lost('open without a linked account');
        return;
      }
      this.phase = 'online';
      this.lastFrameAt = Date.now();
      this.safely('online', () => this.deps.events.online(account));
    }
    if (update.connection === 'close') this.onSocketClosed(update.lastDisconnect?.error);
  }

  private onSocketClosed(error: unknown): void {
    this.stopWatchdog();
    this.markSocketClosed();
    if (!this.isLive) return; // already reported (watchdog), or closed by the actor
    const neverOpened = this.phase !== 'online';
    this.phase = 'ended';
    const described = describeDisconnect(error);
    // Through a proxy, a connection that never opened most likely failed at the proxy: say which one.
    const cause = {
      ...described,
      detail: redactProxyCredentials(
        this.deps.proxyUrl && neverOpened
          ? `through the proxy ${this.deps.proxyUrl}: ${described.detail}`
          : described.detail,
      ),
    };
    this.deps.logger.info(
      { kind: cause.kind, statusCode: cause.statusCode },
      `Baileys connection closed: ${cause.detail}`,
    );
    if (cause.kind === 'logged_out') {
      // The phone unlinked this device: the credentials are dead, wipe them before the actor hears of it.
      this.finishing = this.settleCredentials(true)
        .catch(() => undefined) // logged by settleCredentials; the actor must hear of the logout all the same
        .then(() => this.safely('disconnected', () => this.deps.events.disconnected(cause.kind, cause.detail)));
      return;
    }
    this.finishing = this.settleCredentials(false);
    this.safely('disconnected', () => this.deps.events.disconnected(cause.kind, cause.detail));
  }

  /** The connection is dead although Baileys has not closed it (yet): report it now and make sure it ends. */
  private lost(detail: string): void {
    if (!this.isLive) return;
    this.phase = 'ended';
    this.stopWatchdog();
    this.deps.logger.warn({ detail }, 'Baileys connection lost');
    this.finishing = this.settleCredentials(false);
    this.safely('disconnected', () => this.deps.events.disconnected('transient', `connection_lost (408): ${detail}`));
    void Promise.resolve(this.deps.socket.end(connectionLostError(detail))).catch(() => undefined);
  }

  /** Runs from the start: a socket that falls silent while connecting or showing a QR is as dead as an online one. */
  private startWatchdog(): void {
    const { keepAliveIntervalMs, keepAliveGraceMs } = this.deps.settings;
    const staleAfterMs = keepAliveIntervalMs + keepAliveGraceMs;
    this.watchdog = setInterval(
      () => {
        // Before `open` the WebSocket may still be connecting; once online it must stay open.
        if (this.phase === 'online' && !this.deps.socket.ws.isOpen) return this.lost('the WebSocket is no longer open');
        const silentMs = Date.now() - this.lastFrameAt;
        if (silentMs > staleAfterMs) this.lost(`no answer to keepalive for ${Math.round(silentMs / 1000)} s`);
      },
      Math.max(10, Math.min(5_000, Math.floor(keepAliveIntervalMs / 2))),
    );
    this.watchdog.unref();
  }

  private stopWatchdog(): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    clearInterval(this.pairingTimer);
    this.pairingTimer = undefined;
  }

  private onMessagesUpsert({ messages, type }: BaileysEventMap['messages.upsert']): void {
    // 'notify' arrived while connected; 'append' is what WhatsApp kept for us while offline (acknowledged, so
    // never sent again), the echoes of our own sends (skipped below), and notifications without content
    // (group changes, reported as such). History comes as messaging-history.set, which is not listened to.
    if (type !== 'notify' && type !== 'append') return;
    for (const message of messages) {
      if (!isSupportedChat(message.key.remoteJid)) continue; // status broadcasts, lists and channels
      // Our own sends come back as echoes; messages from the phone or other linked devices are reported.
      if (message.key.fromMe && message.key.id && this.sent.has(message.key.id)) continue;
      this.enqueueReport(() => this.reportMessage(message), 'inbound');
    }
  }

  private async reportMessage(message: WAMessage): Promise<void> {
    const key = message.key as WAMessage['key'] & { remoteJidAlt?: string | null; participantAlt?: string | null };
    const chatJid = key.remoteJid!;
    const isGroup = isGroupJid(chatJid);
    const fromMe = key.fromMe === true;
    const chatId = isGroup ? chatJid : await this.chatIdOf(chatJid, key.remoteJidAlt);
    const participant =
      isGroup && !fromMe && key.participant ? await this.chatIdOf(key.participant, key.participantAlt) : undefined;
    const from = fromMe ? (this.linkedAccount()?.phone ?? '') : (participant ?? chatId);
    if (!chatId || !from) {
      this.deps.logger.warn({ waMessageId: key.id }, 'inbound message from an unknown sender dropped');
      return;
    }
    const change = protocolChangeOf(message);
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
      ...(participant ? { participant } : {}),
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
        if (state && from) this.reportActivity({ kind: 'presence', chatId, from, state });
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
      void this.reject(call.id, call.from, settings.rejectCallsMessage).then((rejected) =>
        this.enqueueReport(report(rejected), 'call'),
      );
    }
  }

  /** Rejects the call (never throws: answers whether it worked), then tells the caller the configured message. */
  private async reject(callId: string, callerJid: string, message: string | null | undefined): Promise<boolean> {
    try {
      await this.deps.socket.rejectCall!.call(this.deps.socket, callId, callerJid);
    } catch (error) {
      this.deps.logger.warn({ err: error, callId }, 'rejecting a call failed');
      return false;
    }
    if (message) {
      const messageId = this.ownMessageId('');
      this.deps.socket
        .sendMessage(jidNormalizedUser(callerJid), { text: message }, { messageId })
        .catch((error: unknown) =>
          this.deps.logger.warn({ err: error, callId }, 'the message to a rejected caller was not sent'),
        );
    }
    return true;
  }

  /** An id for a message the gateway sends on its own, known as ours so that its echo is not reported. */
  private ownMessageId(recipient: string): string {
    const id = generateMessageIDV2(this.deps.auth.state.creds.me?.id);
    this.sent.set(id, recipient);
    return id;
  }

  private reportReceipts(receipts: ReceiptOfJid[]): void {
    for (const { recipientJid, ...receipt } of receipts) {
      this.enqueueReport(async () => {
        const recipient = this.sent.get(receipt.waMessageId) || (await this.phoneOf(recipientJid));
        if (recipient) this.report('receipt', this.deps.events.receipt({ ...receipt, recipient }));
      }, 'receipt');
    }
  }

  private reportContacts(entries: BaileysEventMap['contacts.update']): void {
    const contacts = contactsOf(entries);
    if (contacts.length > 0)
      this.safely('contacts', () => this.report('contacts', this.deps.events.contacts(contacts)));
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

  private reportActivity(activity: ChatActivity): void {
    const durable = this.deps.events.activity?.(activity);
    if (durable) this.report('activity', durable);
  }

  private enqueueReport(task: () => Promise<void>, what: string): void {
    this.reportChain = this.reportChain
      .then(task)
      .catch((error: unknown) => this.deps.logger.error({ err: error }, `reporting ${what} failed`));
  }

  /** An actor callback that throws must not break Baileys' event loop (nor the other listeners). */
  private safely(what: string, callback: () => void): void {
    try {
      callback();
    } catch (error) {
      this.deps.logger.error({ err: error }, `the ${what} callback failed`);
    }
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

  private linkedAccount(): LinkedAccount | undefined {
    const me = this.deps.auth.state.creds.me;
    const phone = phoneOfJid(me?.id);
    if (!me || !phone) return undefined;
    const name = me.name || me.verifiedName || me.notify;
    return { phone, jid: jidOfPhone(phone), ...(name ? { name } : {}) };
  }

  // ---- commands ----

  /** Asks WhatsApp for a pairing code for `phone` (only while QR codes are shown), and again before it expires. */
  async requestPairingCode(phone: string): Promise<void> {
    if (this.phase !== 'qr' || this.retired)
      throw new EngineError(
        'pairing_unavailable',
        `device ${this.deps.deviceId} shows no codes (it has credentials, or is not connected)`,
      );
    const request = this.deps.socket.requestPairingCode;
    if (!request) throw new EngineError('pairing_unavailable', 'this socket cannot link by pairing code');
    const ttlMs = this.deps.settings.pairingCodeTtlMs ?? this.deps.settings.qrTimeoutMs * 3;
    const issue = async () => {
      let code: string;
      try {
        code = await request.call(this.deps.socket, phone);
      } catch (error) {
        throw engineErrorOf(error, 'requesting a pairing code');
      }
      if (!this.isLive) return;
      const shown = /^[A-Za-z0-9]{8}$/.test(code)
        ? `${code.slice(0, 4)}-${code.slice(4)}`.toUpperCase()
        : code.toUpperCase();
      this.safely('pairingCode', () => this.deps.events.pairingCode?.(shown, new Date(Date.now() + ttlMs)));
    };
    await issue();
    clearInterval(this.pairingTimer);
    this.pairingTimer = setInterval(() => {
      if (!this.isLive || this.phase !== 'qr') return clearInterval(this.pairingTimer);
      issue().catch((error: unknown) => this.deps.logger.warn({ err: error }, 'renewing the pairing code failed'));
    }, ttlMs);
    this.pairingTimer.unref();
  }

  async send(message: OutgoingMessage): Promise<void> {
    this.requireOnline();
    const jid = await this.recipientJidOf(message.to);
    const { content } = message;
    const inner = content.kind === 'forward' ? content.content : content;
    if ('media' in inner) await assertReadable(inner.media.path);
    const linkPreview = inner.kind === 'link' && inner.preview !== false ? await this.fetchPreview(inner.url) : null;
    const accountJid = this.linkedAccount()?.jid;
    const payload = outgoingMessageOf(message, {
      chatJid: jid,
      targetSentByUs: (id) => this.sent.has(id),
      linkPreview,
      ...(accountJid ? { accountJid } : {}),
    });
    // Known before Baileys echoes it; kept if the send fails, since the id stays ours (a retry reuses it).
    this.sent.set(message.waMessageId, message.to);
    try {
      await this.deps.socket.sendMessage(jid, payload.content, payload.options);
    } catch (error) {
      throw engineErrorOf(error, `sending ${message.waMessageId}`);
    }
  }

  async markRead(chatId: string, messages: Array<{ waMessageId: string; participant?: string }>): Promise<void> {
    this.requireOnline();
    const remoteJid = jidOfChat(chatId);
    const keys = messages.map((m) => ({
      remoteJid,
      id: m.waMessageId,
      fromMe: false,
      ...(m.participant ? { participant: jidOfChat(m.participant) } : {}),
    }));
    if (!this.deps.socket.readMessages) throw new EngineError('engine_error', 'this socket cannot send read receipts');
    try {
      await this.deps.socket.readMessages(keys);
    } catch (error) {
      throw engineErrorOf(error, `sending read receipts in ${chatId}`);
    }
  }

  async sendPresence(state: ChatPresence | OwnPresence, chatId?: string): Promise<void> {
    this.requireOnline();
    if (!this.deps.socket.sendPresenceUpdate) throw new EngineError('engine_error', 'this socket cannot send presence');
    try {
      await this.deps.socket.sendPresenceUpdate(
        WA_PRESENCE_OF[state],
        chatId === undefined ? undefined : jidOfChat(chatId),
      );
    } catch (error) {
      throw engineErrorOf(error, `sending presence ${state}`);
    }
  }

  async revoke(waMessageId: string, to: string): Promise<void> {
    this.requireOnline();
    const jid = await this.recipientJidOf(to);
    try {
      await this.deps.socket.sendMessage(
        jid,
        { delete: { remoteJid: jid, fromMe: true, id: waMessageId } },
        { messageId: this.ownMessageId('') },
      );
    } catch (error) {
      throw engineErrorOf(error, `revoking ${waMessageId}`);
    }
  }

  async checkNumber(number: string): Promise<{ exists: boolean; jid?: string }> {
    this.requireOnline();
    const found = await this.lookUp(number);
    if (!found?.exists) return { exists: false };
    const jid = normalizedPhoneJid(found.jid) ?? jidOfPhone(number);
    this.knownRecipients.set(number, jid);
    return { exists: true, jid };
  }

  async avatarUrl(number: string): Promise<string | null> {
    this.requireOnline();
    try {
      return (await this.deps.socket.profilePictureUrl(jidOfPhone(number), 'image')) ?? null;
    } catch (error) {
      if (NO_AVATAR_CODES.has(errorCodeOf(error) ?? 0)) return null;
      throw engineErrorOf(error, `fetching the avatar of ${number}`);
    }
  }

  async close(): Promise<void> {
    if (this.retired) return this.finishing;
    this.retired = true;
    this.stopWatchdog();
    if (this.phase !== 'ended') {
      this.phase = 'ended';
      void Promise.resolve(this.deps.socket.end(undefined)).catch(() => undefined);
      await this.socketClosedOrTimeout();
    }
    this.finishing ??= this.settleCredentials(false);
    await this.finishing;
  }

  async logout(): Promise<void> {
    const wasOnline = this.phase === 'online' && !this.retired && this.deps.socket.ws.isOpen;
    this.retired = true;
    this.stopWatchdog();
    this.phase = 'ended';
    try {
      if (wasOnline) {
        // On a dead network the unlink request never completes: give it the close timeout, then end anyway.
        const requested = this.deps.socket.logout().then(() => true);
        if (!(await Promise.race([requested, this.delay(this.deps.settings.closeTimeoutMs).then(() => false)]))) {
          throw new Error(`no answer within ${this.deps.settings.closeTimeoutMs} ms`);
        }
      } else {
        await this.deps.socket.end(undefined);
      }
    } catch (error) {
      // The unlink request may not have reached WhatsApp; the credentials are wiped all the same, which
      // leaves this device unable to connect, and the phone drops the companion on its own later.
      this.deps.logger.warn({ err: error }, 'Baileys logout request failed');
      void Promise.resolve(this.deps.socket.end(undefined)).catch(() => undefined);
    }
    await this.socketClosedOrTimeout();
    await this.previousFinish();
    this.finishing = this.settleCredentials(true);
    await this.finishing;
  }

  private async previousFinish(): Promise<void> {
    await this.finishing?.catch(() => undefined);
  }

  private requireOnline(): void {
    if (this.phase !== 'online' || this.retired) {
      throw new EngineError(
        'not_connected',
        `device ${this.deps.deviceId} is not online (${this.retired ? 'closed' : this.phase})`,
      );
    }
  }

  /**
   * The JID to send to: for a number, the one WhatsApp answered when it was looked up (before the first send
   * to it, when recipients are verified), else the number as typed. Groups and LIDs are JIDs already.
   */
  private async recipientJidOf(to: string): Promise<string> {
    if (!/^\d+$/.test(to)) return jidOfChat(to);
    const known = this.knownRecipients.get(to);
    if (known) return known;
    if (!this.deps.settings.verifyRecipients) return jidOfPhone(to);
    const found = await this.lookUp(to);
    // An empty answer says nothing either way: only an explicit "does not exist" fails the message.
    if (found && !found.exists) throw new EngineError('recipient_not_found', `${to} is not on WhatsApp`, true);
    if (!found?.exists) return jidOfPhone(to);
    const jid = normalizedPhoneJid(found.jid) ?? jidOfPhone(to);
    this.knownRecipients.set(to, jid);
    return jid;
  }

  private async lookUp(number: string): Promise<{ jid: string; exists: boolean } | undefined> {
    try {
      const results = await this.deps.socket.onWhatsApp(number);
      return results?.find((r) => phoneOfJid(r.jid) === number) ?? results?.[0];
    } catch (error) {
      throw engineErrorOf(error, `looking up ${number}`);
    }
  }

  private async fetchPreview(url: string) {
    const provider = this.deps.settings.linkPreview;
    if (!provider) return null;
    try {
      return await provider(url);
    } catch (error) {
      // A preview is decoration: the link is sent without one.
      this.deps.logger.debug({ err: error, url }, 'link preview failed');
      return null;
    }
  }

  private async socketClosedOrTimeout(): Promise<void> {
    await Promise.race([this.socketClosed, this.delay(this.deps.settings.closeTimeoutMs)]);
  }

  /** A timer that never keeps the process alive. */
  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }

  /**
   * Lets queued credential writes land, then refuses later ones: the socket is gone and a late write
   * must not race the next connection's (or resurrect wiped credentials). With `wipe`, erases them.
   */
  private async settleCredentials(wipe: boolean): Promise<void> {
    const { auth, logger } = this.deps;
    auth.stopWrites();
    try {
      await auth.flush();
    } catch (error) {
      logger.error({ err: error }, 'a Baileys credential write failed');
    }
    try {
      if (wipe) await this.deps.wipeCredentials();
    } catch (error) {
      logger.error({ err: error }, 'wiping Baileys credentials failed');
      throw new EngineError(
        'engine_error',
        `could not wipe the credentials of ${this.deps.deviceId}: ${(error as Error).message}`,
      );
    } finally {
      this.deps.onFinished?.();
    }
  }
}

function hasAccount(socket: BaileysSocket): socket is BaileysSocket & BaileysAccountSocket {
  return typeof socket.updateProfileName === 'function' && typeof socket.fetchBlocklist === 'function';
}

function hasGroups(socket: BaileysSocket): socket is BaileysSocket & BaileysGroupSocket {
  return typeof socket.groupCreate === 'function' && typeof socket.groupFetchAllParticipating === 'function';
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A Boom-shaped error, as Baileys ends sockets with (output.statusCode 408 = connectionLost). */
function connectionLostError(detail: string): Error {
  return Object.assign(new Error(`Connection was lost: ${detail}`), { output: { statusCode: 408 } });
}

/** WhatsApp's error code of a failed query (Boom `data`), or the Boom status code. */
function errorCodeOf(error: unknown): number | undefined {
  const data = (error as { data?: unknown } | null)?.data;
  return typeof data === 'number' ? data : statusCodeOf(error);
}

function engineErrorOf(error: unknown, doing: string): EngineError {
  if (error instanceof EngineError) return error;
  const message = `${doing}: ${(error as Error)?.message ?? String(error)}`;
  // 428 connectionClosed / 408 connectionLost: the socket went away mid-request; retry once online.
  const code = statusCodeOf(error);
  return new EngineError(code === 428 || code === 408 ? 'not_connected' : 'engine_error', message);
}

async function assertReadable(path: string): Promise<void> {
  try {
    await access(path, constants.R_OK);
  } catch {
    throw new EngineError('media_unavailable', `the media file ${path} cannot be read`, true);
  }
}
