/**
 * One Baileys socket of one device, seen through the engine port: it reports what happened (qr, online,
 * disconnected, inbound, receipts, contacts) and performs what the actor asks; it decides no state. `online`
 * only on Baileys' `open`, and a watchdog reports a dead connection at once rather than after the WebSocket's
 * closing handshake (docs/api-guide.md, "Honest state"). Mapping what the socket reports: baileys-inbound.ts;
 * doing what the actor asks: baileys-outbound.ts.
 */
import type { ConnectionState } from 'baileys';
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import {
  type ChatPresence,
  type EngineConnection,
  EngineError,
  type AccountOperations,
  type ChannelOperations,
  type ChatOperations,
  type LabelOperations,
  type EngineEvents,
  type GroupOperations,
  type LinkedAccount,
  type OutgoingMessage,
  type OwnPresence,
} from '../engine.js';
import type { BaileysSocket } from './baileys-socket.js';
import { describeDisconnect } from './disconnect-kind.js';
import { jidOfPhone, phoneOfJid } from './jid.js';
import type { LinkPreviewProvider } from './outgoing-content.js';
import type { StoreAuthState } from './auth/store-auth-state.js';
import type { DeviceSettings } from '../../settings/settings-events.js';
import { redactProxyCredentials } from '../../settings/proxy-url.js';
import { type BaileysAccountSocket, baileysAccountOperations } from './account.js';
import { type BaileysGroupSocket, baileysGroupOperations } from './groups.js';
import { ChannelPostIds, baileysChannelOperations, hasChannels } from './channels.js';
import { baileysChatOperations, hasChats } from './chats.js';
import { baileysLabelOperations } from './labels.js';
import { OwnChatChanges } from './own-chat-changes.js';
import type { Clock, ClockTimer } from '../../time/clock.js';
import { BaileysInbound, type MediaDownloader, type PollLookup } from './baileys-inbound.js';
import { BaileysOutbound, engineErrorOf } from './baileys-outbound.js';

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

export interface ConnectionDependencies {
  deviceId: string;
  socket: BaileysSocket;
  auth: StoreAuthState;
  events: EngineEvents;
  settings: ConnectionSettings;
  logger: Logger;
  /** Times the pairing code's renewal. */
  clock: Clock;
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

export class BaileysConnection implements EngineConnection {
  private phase: Phase = 'connecting';
  /** close() or logout() was called: the actor knows, so no lifecycle event is reported anymore. */
  private retired = false;
  private lastFrameAt: number;
  /**
   * Messages sent and not yet acknowledged by the server (id → when sent, ms). A socket whose pings are answered
   * but whose messages are not taken is as dead as a silent one (issue 35: "connected" but deaf). Watched only once
   * the socket has shown it reports acknowledgements (`acksSeen`), so a socket that names them otherwise never
   * flaps.
   */
  private readonly unacked = new Map<string, number>();
  private acksSeen = false;
  private watchdog: ClockTimer | undefined;
  private readonly socketClosed: Promise<void>;
  private markSocketClosed!: () => void;
  /**
   * Ids this connection sent (filled before the send: Baileys upserts its echo right after relaying it) →
   * the recipient receipts name, or "" for one the receipt itself names (a revoke, a rejected caller's reply).
   */
  private readonly sent = new LRUCache<string, string>({ max: SENT_MEMORY });
  /** Chat changes made here, whose local echo Baileys emits like the phone's. */
  private readonly ownChatChanges = new OwnChatChanges();
  /** Channel posts' server ids, learned from posts read or received, for reactions to them and theirs. */
  private readonly channelPosts = new ChannelPostIds();
  private readonly inbound: BaileysInbound;
  private readonly outbound: BaileysOutbound;
  private finishing: Promise<void> | undefined;
  readonly groups: GroupOperations | undefined;
  readonly profileOps: AccountOperations | undefined;
  readonly chats: ChatOperations | undefined;
  readonly channels: ChannelOperations | undefined;
  readonly labels: LabelOperations | undefined;
  private pairingTimer: ClockTimer | undefined;

  constructor(private readonly deps: ConnectionDependencies) {
    this.lastFrameAt = deps.clock.now();
    this.socketClosed = new Promise((resolve) => (this.markSocketClosed = resolve));
    const linkedAccount = () => this.linkedAccount();
    this.outbound = new BaileysOutbound({
      ...deps,
      sent: this.sent,
      linkedAccount,
      requireOnline: () => this.requireOnline(),
      awaitAck: (waMessageId) => {
        if (this.unacked.size < SENT_MEMORY) this.unacked.set(waMessageId, this.deps.clock.now());
      },
    });
    this.inbound = new BaileysInbound({
      ...deps,
      sent: this.sent,
      ownChatChanges: this.ownChatChanges,
      channelPosts: this.channelPosts,
      linkedAccount,
      rejectCall: (callId, callerJid, message) => this.outbound.rejectCall(callId, callerJid, message),
      safely: (what, callback) => this.safely(what, callback),
    });
    this.groups = hasGroups(deps.socket) ? baileysGroupOperations(deps.socket, () => this.requireOnline()) : undefined;
    this.channels = hasChannels(deps.socket)
      ? baileysChannelOperations(deps.socket, () => this.requireOnline(), this.channelPosts)
      : undefined;
    this.chats = hasChats(deps.socket)
      ? baileysChatOperations(deps.socket, () => this.requireOnline(), this.ownChatChanges)
      : undefined;
    this.labels = hasChats(deps.socket)
      ? baileysLabelOperations(
          deps.socket,
          () => this.requireOnline(),
          this.ownChatChanges,
          () => this.deps.auth.state.creds,
        )
      : undefined;
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

  // ---- lifecycle ----

  private listen(): void {
    const { socket } = this.deps;
    socket.ws.on('frame', () => {
      this.lastFrameAt = this.deps.clock.now();
    });
    // An error ack (a message the server refused) is an answer too: the connection works.
    socket.ws.on('CB:ack,class:message', (node) => {
      this.acksSeen = true;
      if (node.attrs.id !== undefined) this.unacked.delete(node.attrs.id);
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
    this.inbound.listen();
  }

  private onConnectionUpdate(update: Partial<ConnectionState>): void {
    if (update.qr && this.isLive) {
      this.phase = 'qr';
      this.safely('qr', () =>
        this.deps.events.qr(update.qr!, new Date(this.deps.clock.now() + this.deps.settings.qrTimeoutMs)),
      );
    }
    if (update.connection === 'open' && this.isLive) {
      const account = this.linkedAccount();
      if (!account) {
        // Cannot happen with Baileys (open follows a login with creds.me); never claim online without an account.
        this.lost('open without a linked account');
        return;
      }
      this.phase = 'online';
      this.lastFrameAt = this.deps.clock.now();
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

  /**
   * Checks that the WebSocket is still open and that frames keep arriving (Baileys pings every
   * keepAliveIntervalMs and the server answers). Baileys' own keepalive check ends the socket too, but its close
   * waits for the closing handshake, which on a dead network takes up to 30 s: the device must not claim to be
   * online meanwhile. Runs from the start: a socket that falls silent while connecting or showing a QR is as
   * dead as an online one.
   */
  private startWatchdog(): void {
    const { keepAliveIntervalMs, keepAliveGraceMs } = this.deps.settings;
    const staleAfterMs = keepAliveIntervalMs + keepAliveGraceMs;
    const { clock } = this.deps;
    this.watchdog = clock.setInterval(
      () => {
        // Before `open` the WebSocket may still be connecting; once online it must stay open.
        if (this.phase === 'online' && !this.deps.socket.ws.isOpen) return this.lost('the WebSocket is no longer open');
        const silentMs = clock.now() - this.lastFrameAt;
        if (silentMs > staleAfterMs) return this.lost(`no answer to keepalive for ${Math.round(silentMs / 1000)} s`);
        const unackedMs = this.phase === 'online' && this.acksSeen ? this.oldestUnackedMs() : 0;
        // Twice the keepalive limit: the server acknowledges within a second; a slow one must not be dropped.
        if (unackedMs > 2 * staleAfterMs)
          this.lost(`no server acknowledgement of a message sent ${Math.round(unackedMs / 1000)} s ago`);
      },
      Math.max(10, Math.min(5_000, Math.floor(keepAliveIntervalMs / 2))),
    );
    this.watchdog.unref();
  }

  /** How long the oldest message sent has waited for the server's acknowledgement (0: none waits). */
  private oldestUnackedMs(): number {
    // Insertion order is send order: the first entry is the oldest.
    for (const sentAt of this.unacked.values()) return this.deps.clock.now() - sentAt;
    return 0;
  }

  private stopWatchdog(): void {
    this.deps.clock.clear(this.watchdog);
    this.watchdog = undefined;
    this.deps.clock.clear(this.pairingTimer);
    this.pairingTimer = undefined;
  }

  /** An actor callback that throws must not break Baileys' event loop (nor the other listeners). */
  private safely(what: string, callback: () => void): void {
    try {
      callback();
    } catch (error) {
      this.deps.logger.error({ err: error }, `the ${what} callback failed`);
    }
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
    // Called below with .call(socket): its `this` is kept.
    // eslint-disable-next-line @typescript-eslint/unbound-method
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
      const expiresAt = new Date(this.deps.clock.now() + ttlMs);
      this.safely('pairingCode', () => this.deps.events.pairingCode?.(shown, expiresAt));
    };
    await issue();
    const { clock } = this.deps;
    clock.clear(this.pairingTimer);
    this.pairingTimer = clock
      .setInterval(() => {
        if (!this.isLive || this.phase !== 'qr') return clock.clear(this.pairingTimer);
        issue().catch((error: unknown) => this.deps.logger.warn({ err: error }, 'renewing the pairing code failed'));
      }, ttlMs)
      .unref();
  }

  send(message: OutgoingMessage): Promise<void> {
    return this.outbound.send(message);
  }

  /** Resolves once the inbound reports queued so far are made (a test waits on it instead of a sleep). */
  reportsSettled(): Promise<void> {
    return this.inbound.settled();
  }

  markRead(chatId: string, messages: Array<{ waMessageId: string; participant?: string }>): Promise<void> {
    return this.outbound.markRead(chatId, messages);
  }

  async subscribePresence(number: string): Promise<void> {
    this.requireOnline();
    const socket = this.deps.socket;
    if (!socket.presenceSubscribe)
      throw new EngineError('engine_error', 'this Baileys socket cannot subscribe to presence');
    try {
      await socket.presenceSubscribe(jidOfPhone(number));
    } catch (error) {
      throw engineErrorOf(error, `subscribing to the presence of ${number}`);
    }
  }

  sendPresence(state: ChatPresence | OwnPresence, chatId?: string): Promise<void> {
    return this.outbound.sendPresence(state, chatId);
  }

  revoke(waMessageId: string, to: string): Promise<void> {
    return this.outbound.revoke(waMessageId, to);
  }

  checkNumber(number: string): Promise<{ exists: boolean; jid?: string }> {
    return this.outbound.checkNumber(number);
  }

  avatarUrl(number: string): Promise<string | null> {
    return this.outbound.avatarUrl(number);
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

/** A Boom-shaped error, as Baileys ends sockets with (output.statusCode 408 = connectionLost). */
function connectionLostError(detail: string): Error {
  return Object.assign(new Error(`Connection was lost: ${detail}`), { output: { statusCode: 408 } });
}
