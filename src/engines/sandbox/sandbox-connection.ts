/**
 * One connection of one sandbox device to the simulated network. It walks the phases a WhatsApp Web
 * connection walks (show codes until scanned, then restart; or log in with stored credentials), and
 * reports through the same EngineEvents as the real engine.
 */
import { randomBytes, randomInt } from 'node:crypto';
import {
  type ChatActivity,
  type ChatOperations,
  type LabelOperations,
  type ChatPresence,
  EngineError,
  type EngineConnection,
  type AccountOperations,
  type ChannelOperations,
  type EngineEvents,
  type GroupOperations,
  type GroupReport,
  type HistoryChunk,
  type InboundMessage,
  type LinkedAccount,
  type OutgoingMessage,
  type OwnPresence,
  type Receipt,
  type ReportOptions,
} from '../engine.js';
import { isGroupId, isLidId } from '../../messages/chat-id.js';
import type { SandboxCredentialStore } from './sandbox-credentials.js';
import type { SandboxNetwork } from './sandbox-network.js';
import { avatarUrlOf, jidOf, lidOf, numberExists } from './sandbox-numbers.js';
import { sandboxGroupOperations } from './sandbox-group-operations.js';
import { sandboxChannelOperations } from './sandbox-channels.js';
import { olderHistory } from './sandbox-history.js';
import { isChannelId } from '../../channels/channel-id.js';
import type { ChannelReport } from '../../channels/channel-events.js';

type Phase = 'starting' | 'qr' | 'code' | 'pairing' | 'online' | 'ended';

const PAIRING_ALPHABET = 'ABCDEFGHJKLMNPQRSTVWXYZ23456789';

/** Eight characters as WhatsApp shows them: `ABCD-EFGH`. */
function newPairingCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += PAIRING_ALPHABET[randomInt(PAIRING_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export class SandboxConnection implements EngineConnection {
  private phase: Phase = 'starting';
  private qrTimer: NodeJS.Timeout | undefined;
  private qrTtlMs = 20_000;
  private linked: LinkedAccount | undefined;
  readonly groups: GroupOperations;
  readonly profileOps: AccountOperations;
  readonly channels: ChannelOperations;
  /** The sandbox phone takes every chat change this device makes (its own app state: nobody else sees it). */
  readonly chats: ChatOperations;
  /** Labels, likewise taken by the phone; only a business phone has them. */
  readonly labels: LabelOperations;
  private business = false;
  /** While linking by code: the code on show and the number it links. */
  private pairingRequest: { code: string; phone: string } | undefined;

  constructor(
    readonly deviceId: string,
    private readonly events: EngineEvents,
    private readonly network: SandboxNetwork,
    private readonly credentials: SandboxCredentialStore,
  ) {
    const me = () => {
      this.requireOnline();
      return this.linked!.phone;
    };
    this.groups = sandboxGroupOperations(this, network, me);
    this.profileOps = network.profiles.operations(me);
    this.channels = sandboxChannelOperations(network.channels, me, (report, numbers) =>
      network.tellChannel(report, numbers, this),
    );
    const taken = async () => {
      me();
    };
    this.chats = {
      modify: taken,
      star: taken,
      pin: taken,
      deleteForMe: taken,
      fetchHistory: async (chatId, count, oldest) => {
        const members = [...(network.groups.get(chatId)?.members.keys() ?? [])];
        const chunk = olderHistory(chatId, count, oldest, me(), members);
        // The phone answers later, as WhatsApp's does; a deaf device hears nothing.
        network.later(0, () => {
          if (!this.deaf) void this.events.history?.(chunk).catch(() => undefined);
        });
      },
    };
    this.labels = { isBusiness: () => this.business, edit: taken, labelChat: taken };
  }

  get online(): boolean {
    return this.phase === 'online';
  }

  get showingQr(): boolean {
    return this.phase === 'qr';
  }

  /** A code was scanned or entered and the link is being stored; false once the connection ended. */
  get pairing(): boolean {
    return this.phase === 'pairing';
  }

  /** The account, once online. */
  get account(): LinkedAccount | undefined {
    return this.linked;
  }

  /** No credentials: show a fresh code now and renew it every `ttlMs` until it is scanned. */
  showQr(ttlMs: number): void {
    if (this.phase !== 'starting') return;
    this.qrTtlMs = ttlMs;
    this.phase = 'qr';
    const issue = () =>
      this.events.qr(`sandbox:${randomBytes(18).toString('base64url')}`, new Date(Date.now() + ttlMs));
    issue();
    this.qrTimer = setInterval(issue, ttlMs);
    this.qrTimer.unref();
  }

  /**
   * Linking by code instead of a QR: codes `ABCD-EFGH` for `phone`, renewed every `ttlMs` like QR codes.
   * Only while QR codes are on show (a connection without credentials).
   */
  async requestPairingCode(phone: string, ttlMs = this.qrTtlMs): Promise<void> {
    if (this.phase !== 'qr' && this.phase !== 'code')
      throw new EngineError(
        'pairing_unavailable',
        'the sandbox connection shows no codes (it has credentials, or is not connected)',
      );
    if (!numberExists(phone))
      throw new EngineError(
        'unknown_number',
        `${phone} does not exist in the sandbox (numbers ending in 0000 do not exist)`,
        true,
      );
    this.stopQr();
    this.phase = 'code';
    const issue = () => {
      const code = newPairingCode();
      this.pairingRequest = { code, phone };
      this.events.pairingCode?.(code, new Date(Date.now() + ttlMs));
    };
    issue();
    this.qrTimer = setInterval(issue, ttlMs);
    this.qrTimer.unref();
  }

  /** The code typed on the phone: the number it links, or why not ('no_code' when none is on show, 'wrong' when it differs). */
  pairingCodeEntered(code: string): { phone: string } | 'no_code' | 'wrong' {
    if (this.phase !== 'code' || !this.pairingRequest) return 'no_code';
    const normalize = (text: string) => text.replace(/[\s-]/g, '').toUpperCase();
    return normalize(code) === normalize(this.pairingRequest.code) ? { phone: this.pairingRequest.phone } : 'wrong';
  }

  /** The phone scanned the code (or entered the pairing code): no more codes. False when no code is on show. */
  beginPairing(): boolean {
    if (this.phase !== 'qr' && this.phase !== 'code') return false;
    this.phase = 'pairing';
    this.stopQr();
    return true;
  }

  /** Pairing could not be completed (credentials not saved): show codes again. */
  abortPairing(ttlMs: number): void {
    if (this.phase !== 'pairing') return;
    this.phase = 'starting';
    this.showQr(ttlMs);
  }

  /** Stored credentials were accepted. */
  goOnline(phone: string, business = false): void {
    if (this.phase !== 'starting') return;
    this.phase = 'online';
    this.business = business;
    this.linked = { phone, jid: jidOf(phone) };
    this.network.attach(this, phone);
    this.events.online(this.linked);
  }

  /** The network ends the connection and says why. */
  drop(kind: Parameters<EngineEvents['disconnected']>[0], detail: string): void {
    if (this.phase === 'ended') return;
    this.end();
    this.events.disconnected(kind, detail);
  }

  /** The numbers whose LID this connection reported. */
  private readonly pairsTold = new Set<string>();

  /** A message from another number arrives; resolves once the device has it durably (see ReportOptions). */
  receive(message: InboundMessage, options?: ReportOptions): Promise<void> {
    // Deaf: the connection stays up and nothing arrives (a session that says online and hears nothing).
    if (this.deaf) return Promise.resolve();
    // As WhatsApp does, the sender's LID comes with its message (Baileys: the key's alternative address).
    const sender = message.participant ?? message.from;
    if (message.fromMe || isGroupId(sender) || isLidId(sender) || this.pairsTold.has(sender))
      return this.events.inbound(message, options);
    // Once per connection, as WhatsApp tells a mapping once: not a write for every message.
    this.pairsTold.add(sender);
    // Not recorded (the device stopping): told again with the next message.
    const identity = this.events
      .identities?.([{ number: sender, lid: lidOf(sender) }])
      .catch(() => void this.pairsTold.delete(sender));
    return Promise.all([identity, this.events.inbound(message, options)]).then(() => undefined);
  }

  private get deaf(): boolean {
    return this.network.isDeaf(this.deviceId);
  }

  // The network hands these over and goes on, as a real one does: what the device makes of them is its own
  // business (its actor logs what it cannot record, e.g. while stopping), never an unhandled rejection.

  /** An edit, revoke, vote, presence or call reaches the device. */
  activity(activity: ChatActivity): void {
    if (this.deaf) return;
    void this.events.activity?.(activity).catch(() => undefined);
  }

  /**
   * A chunk of the account's history reaches the device (recorded through its own spool). The phone (the
   * sandbox's POST /history) waits for the answer, so a chunk the store refuses is refused to it, not kept.
   */
  history(chunk: HistoryChunk): Promise<void> {
    return this.events.history?.(chunk, { retry: false }) ?? Promise.resolve();
  }

  /** A group change made by another device reaches this one. */
  groupReport(report: GroupReport): void {
    if (this.deaf) return;
    void this.events.groups?.(report).catch(() => undefined);
  }

  /** A change of a channel the device follows, made by another device. */
  channelReport(report: ChannelReport): void {
    if (this.deaf) return;
    void this.events.channels?.(report).catch(() => undefined);
  }

  /** Receipts reach the device that sent, also if this connection has ended since (they are facts). */
  receipt(receipt: Receipt): void {
    if (this.deaf) return;
    void this.events.receipt(receipt).catch(() => undefined);
  }

  async send(message: OutgoingMessage): Promise<void> {
    this.requireOnline();
    this.requireReachable(message.to);
    const from = this.linked!.phone;
    const { content } = message;
    if (content.kind === 'edit') {
      const timestamp = Math.floor(Date.now() / 1000);
      const chatId = isGroupId(message.to) ? message.to : from;
      this.network.relay(this, message.to, from, {
        kind: 'edited',
        id: message.waMessageId,
        chatId,
        from,
        waMessageId: content.messageId,
        body: content.text,
        timestamp,
      });
      return;
    }
    // Deaf: the send seems to go, and nothing leaves (no delivery, no receipts).
    if (this.deaf) return;
    const recipients = this.network.audienceOf(message.to, this, from, message.audience);
    const inner = content.kind === 'forward' ? content.content : content;
    // A file that cannot be opened leaves the recipients with the media's description only.
    const media =
      'media' in inner
        ? await this.network.openMediaFor(inner.media.path, recipients.length).catch(() => undefined)
        : undefined;
    this.network.deliver(this, from, message, recipients, media);
  }

  async revoke(waMessageId: string, to: string): Promise<void> {
    this.requireOnline();
    this.requireReachable(to);
    const from = this.linked!.phone;
    const chatId = isGroupId(to) ? to : from;
    this.network.relay(this, to, from, {
      kind: 'revoked',
      chatId,
      from,
      waMessageId,
      timestamp: Math.floor(Date.now() / 1000),
    });
  }

  async markRead(_chatId: string, messages: Array<{ waMessageId: string }>): Promise<void> {
    this.requireOnline();
    for (const { waMessageId } of messages) this.network.markRead(this.linked!.phone, waMessageId);
  }

  async subscribePresence(number: string): Promise<void> {
    this.requireOnline();
    this.network.subscribePresence(this, number);
  }

  async sendPresence(state: ChatPresence | OwnPresence, chatId?: string): Promise<void> {
    this.requireOnline();
    if (chatId === undefined && (state === 'available' || state === 'unavailable')) {
      this.network.ownPresence(this.linked!.phone, state);
      return;
    }
    if (chatId === undefined || state === 'available' || state === 'unavailable') return;
    this.network.presence(this, this.linked!.phone, chatId, state);
  }

  private requireReachable(to: string): void {
    if (isChannelId(to)) {
      // Only the channel's owner and admins post to it.
      this.network.channels.adminOf(to, this.linked!.phone);
    } else if (isGroupId(to)) {
      if (!this.network.groups.get(to))
        throw new EngineError('recipient_not_found', `the group ${to} does not exist in the sandbox`, true);
    } else if (!isLidId(to) && !numberExists(to)) {
      throw new EngineError(
        'recipient_not_found',
        `${to} is not on the network (sandbox numbers ending in 0000 do not exist)`,
        true,
      );
    }
  }

  async checkNumber(number: string): Promise<{ exists: boolean; jid?: string }> {
    this.requireOnline();
    return numberExists(number) ? { exists: true, jid: jidOf(number) } : { exists: false };
  }

  async avatarUrl(number: string): Promise<string | null> {
    this.requireOnline();
    return avatarUrlOf(number);
  }

  async close(): Promise<void> {
    this.end();
  }

  async logout(): Promise<void> {
    this.end();
    await this.credentials.wipe(this.deviceId);
  }

  private requireOnline(): void {
    if (this.phase !== 'online') throw new EngineError('not_connected', 'the sandbox connection is not online');
  }

  private end(): void {
    this.phase = 'ended';
    this.stopQr();
    this.network.detach(this);
  }

  private stopQr(): void {
    if (this.qrTimer) clearInterval(this.qrTimer);
    this.qrTimer = undefined;
  }
}
