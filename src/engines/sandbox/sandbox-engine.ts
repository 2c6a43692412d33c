/**
 * The sandbox engine (docs/api-guide.md, "Sessions and the sandbox engine"): a simulated network inside the
 * gateway, so that integrations can be built and tested with no phone. At the engine port it behaves like the
 * real one: codes until scanned, then a restart and a login with the stored credentials; sends, receipts,
 * number checks and avatars; dropped connections and unlinked devices. Besides the port, it offers what the
 * phone and the network do (the admin /sandbox routes).
 */
import type { ChatActivity, Engine, EngineConnection, EngineEvents, HistoryChunk, InboundMessage } from '../engine.js';
import { isGroupId } from '../../messages/chat-id.js';
import type { EventStore } from '../../eventstore/event-store.js';
import { SandboxConnection } from './sandbox-connection.js';
import { SandboxCredentialStore } from './sandbox-credentials.js';
import { SandboxNetwork, type SandboxTiming, newSandboxMessageId } from './sandbox-network.js';
import { numberExists } from './sandbox-numbers.js';
import { historyIdOf } from './sandbox-history.js';
import type { StoredSandboxGroup } from './sandbox-groups.js';
import { reactionReport } from './sandbox-channels.js';
import type { DeviceSettings } from '../../settings/settings-events.js';

/** A message a device sent that the network has not confirmed as read yet. */
export interface UnconfirmedSend {
  waMessageId: string;
  to: string;
  status: 'sent' | 'delivered';
}

/**
 * A device's sent messages still short of `read`, a page at a time after `afterSeq` (the outbox read
 * model answers it; the composition root, src/gateway.ts, wires it in: engines do not know the outbox).
 */
export type UnconfirmedSends = (
  deviceId: string,
  page: { limit: number; afterSeq?: number },
) => { items: UnconfirmedSend[]; nextAfterSeq: number | null };

export interface SandboxSettings extends SandboxTiming {
  /** How long a code is valid before the next one replaces it. */
  qrTtlMs?: number;
  /** Without it, receipts pending when the process stopped never come. */
  unconfirmedSends?: UnconfirmedSends;
  /** Each device's settings: whether calls are rejected, and the message the caller gets. */
  deviceSettings?: (
    deviceId: string,
  ) => Pick<DeviceSettings, 'rejectCalls' | 'rejectCallsMessage'> & Partial<Pick<DeviceSettings, 'historySync'>>;
}

const UNCONFIRMED_PAGE = 500;
const SANDBOX_GROUPS_KEY = 'sandbox-network-groups';
const GROUPS_SAVE_DELAY_MS = 200;

export const SANDBOX_QR_TTL_MS = 20_000;

export type ScanOutcome = 'paired' | 'no_qr' | 'unknown_number';
export type PairingOutcome = 'paired' | 'no_code' | 'wrong_code';
export type UnlinkOutcome = 'unlinked' | 'not_linked';

export class SandboxEngine implements Engine {
  readonly name = 'sandbox' as const;
  private readonly network: SandboxNetwork;
  private readonly credentials: SandboxCredentialStore;
  private readonly qrTtlMs: number;
  private readonly unconfirmedSends: UnconfirmedSends | undefined;
  private readonly deviceSettings: SandboxSettings['deviceSettings'];
  /** The network's groups as the store kept them, loaded before the first connection. */
  /** Connections still starting when the phone unlinked their device: they end logged out instead of online. */
  private readonly unlinkedWhileStarting = new WeakSet<SandboxConnection>();
  private readonly groupsRestored: Promise<void>;
  private groupsSaving: Promise<void> = Promise.resolve();
  private groupsDirty = false;

  constructor(store: EventStore, settings: SandboxSettings) {
    this.network = new SandboxNetwork(settings);
    this.credentials = new SandboxCredentialStore(store);
    this.qrTtlMs = settings.qrTtlMs ?? SANDBOX_QR_TTL_MS;
    this.unconfirmedSends = settings.unconfirmedSends;
    this.deviceSettings = settings.deviceSettings;
    // Groups outlive the process like the sandbox credentials do (a snapshot slot, not a stream: the
    // devices' own group streams are the history), so a restart does not empty every device's groups.
    this.groupsRestored = store.loadSnapshot<StoredSandboxGroup[]>(SANDBOX_GROUPS_KEY).then(
      (snapshot) => this.network.groups.restore(snapshot?.state ?? []),
      () => undefined,
    );
    this.network.groups.onChange = () => this.saveGroups(store);
  }

  /** Saves the groups shortly after a change, coalescing a burst of changes into one write. */
  private saveGroups(store: EventStore): void {
    if (this.groupsDirty) return;
    this.groupsDirty = true;
    this.groupsSaving = this.groupsSaving
      .then(() => new Promise<void>((resolve) => setTimeout(resolve, GROUPS_SAVE_DELAY_MS)))
      .then(() => {
        this.groupsDirty = false;
        return store.saveSnapshot(SANDBOX_GROUPS_KEY, { revision: 0, state: this.network.groups.toJSON() });
      })
      .catch(() => undefined);
  }

  /**
   * `from` calls the device: rejected when its settings say so (the caller then gets the configured
   * message, as a text from the device); recorded as `call.received` either way. False when it is not online.
   */
  call(deviceId: string, call: { callId: string; from: string; isVideo: boolean }): boolean {
    const connection = this.network.connectionOf(deviceId);
    if (!connection?.online) return false;
    const settings = this.deviceSettings?.(deviceId);
    const rejected = settings?.rejectCalls === true;
    this.activity(deviceId, {
      kind: 'call',
      ...call,
      isGroup: false,
      rejected,
      timestamp: Math.floor(Date.now() / 1000),
    });
    if (rejected && settings?.rejectCallsMessage) {
      void connection
        .send({
          waMessageId: newSandboxMessageId(),
          to: call.from,
          content: { kind: 'text', text: settings.rejectCallsMessage },
        })
        .catch(() => undefined);
    }
    return true;
  }

  async connect(deviceId: string, events: EngineEvents): Promise<EngineConnection> {
    await this.groupsRestored;
    const connection = new SandboxConnection(deviceId, events, this.network, this.credentials);
    // As on WhatsApp, a second connection with the same credentials pushes the first one out.
    this.network.track(connection)?.drop('connection_replaced', 'another connection of this device took over');
    const credentials = await this.credentials.load(deviceId);
    // Progress is reported after connect() has answered, as a network would.
    this.network.later(0, () => {
      if (!credentials) connection.showQr(this.qrTtlMs);
      // The phone may have unlinked the device since its credentials were read (logout() below).
      else if (credentials.revoked || this.unlinkedWhileStarting.has(connection)) {
        this.credentials.wipe(deviceId).then(
          () => connection.drop('logged_out', 'the phone unlinked this device'),
          () => connection.drop('transient', 'the credentials could not be read'),
        );
      } else {
        connection.goOnline(credentials.phone, credentials.business === true);
        this.resumeReceipts(connection);
      }
    });
    return connection;
  }

  /**
   * A device that comes online gets the receipts its sent messages are still owed, counted from now: the
   * network keeps them for it, while the timers of an earlier process (or connection) may be gone.
   * Receipts are recorded once whatever comes twice (deterministic ids, statuses only move forward).
   */
  private resumeReceipts(connection: SandboxConnection): void {
    if (!this.unconfirmedSends) return;
    let afterSeq: number | undefined;
    try {
      do {
        const page = this.unconfirmedSends(connection.deviceId, {
          limit: UNCONFIRMED_PAGE,
          ...(afterSeq === undefined ? {} : { afterSeq }),
        });
        for (const message of page.items) this.network.receiptsAfter(connection, message, message.status);
        afterSeq = page.nextAfterSeq ?? undefined;
      } while (afterSeq !== undefined && connection.online);
    } catch {
      // The read model could not be read: those receipts come with the device's next connection.
    }
  }

  async forget(deviceId: string): Promise<void> {
    await this.credentials.wipe(deviceId);
  }

  async close(): Promise<void> {
    await this.network.close();
    await this.groupsSaving;
  }

  /**
   * The phone `phone` scans the code the device shows (`business`: a WhatsApp Business phone); the device then
   * restarts and logs in.
   */
  async scan(deviceId: string, phone: string, business = false): Promise<ScanOutcome> {
    if (!numberExists(phone)) return 'unknown_number';
    const connection = this.network.connectionOf(deviceId);
    if (!connection?.beginPairing()) return 'no_qr';
    if (!(await this.saveLink(connection, phone, business))) return 'no_qr';
    // What WhatsApp does right after pairing: close the connection and ask for a restart (Baileys' 515).
    connection.drop('restart_required', 'paired with the phone; restart required');
    return 'paired';
  }

  /**
   * Stores the link a pairing made; false when the connection ended while it was written (closed, logged
   * out, the device deleted): the wipe that came with that ran before this write landed, so it is wiped
   * again and the pairing fails, as it would have a moment later.
   */
  private async saveLink(connection: SandboxConnection, phone: string, business = false): Promise<boolean> {
    try {
      await this.credentials.save(connection.deviceId, {
        phone,
        linkedAt: new Date().toISOString(),
        ...(business ? { business: true as const } : {}),
      });
    } catch (error) {
      connection.abortPairing(this.qrTtlMs);
      throw error;
    }
    if (connection.pairing) return true;
    await this.credentials.wipe(connection.deviceId);
    return false;
  }

  /** The phone enters the pairing code the device shows; the device then restarts and logs in with the number it asked for. */
  async enterPairingCode(deviceId: string, code: string): Promise<PairingOutcome> {
    const connection = this.network.connectionOf(deviceId);
    const entered = connection?.pairingCodeEntered(code) ?? 'no_code';
    if (entered === 'no_code') return 'no_code';
    if (entered === 'wrong') return 'wrong_code';
    if (!connection!.beginPairing()) return 'no_code';
    if (!(await this.saveLink(connection!, entered.phone))) return 'no_code';
    connection!.drop('restart_required', 'paired with the phone by code; restart required');
    return 'paired';
  }

  /**
   * A message from `from` reaches the device (fields as `message.received` reports them; `chatId`
   * defaults to `from`); resolves once the device has recorded it, undefined when the device is not online.
   * The sender waits for the answer, so a message the store refuses is refused to it (the promise rejects
   * with the store's error) and never recorded later: as a network whose message was not acknowledged,
   * the sender sends it again if it wants to.
   */
  async inbound(
    deviceId: string,
    message: Omit<InboundMessage, 'waMessageId' | 'timestamp'> & { waMessageId?: string },
  ): Promise<{ waMessageId: string } | undefined> {
    const connection = this.network.connectionOf(deviceId);
    if (!connection?.online) return undefined;
    const waMessageId = message.waMessageId ?? newSandboxMessageId();
    const chatId = message.chatId ?? message.from;
    const isGroup = isGroupId(chatId);
    await connection.receive(
      {
        ...message,
        waMessageId,
        chatId,
        isGroup,
        fromMe: message.fromMe ?? false,
        ...(isGroup ? { participant: message.from } : {}),
        timestamp: Math.floor(Date.now() / 1000),
      },
      { retry: false },
    );
    return { waMessageId };
  }

  /** An edit, revoke, poll vote, presence or call reaches the device; false when it is not online. */
  /**
   * The phone sends a history sync to the device: recorded unless its `historySync` setting is `none` (then
   * dropped, as a real device that asked for none gets none). False when the device is not online. Resolves
   * once recorded; rejects with the store's error when it cannot record (nothing is recorded later).
   */
  async history(deviceId: string, chunk: SandboxHistoryChunk): Promise<boolean> {
    const connection = this.network.connectionOf(deviceId);
    if (!connection?.online) return false;
    if ((this.deviceSettings?.(deviceId).historySync ?? 'recent') === 'none') return true;
    await connection.history({
      ...chunk,
      // Only a message sent without an id is copied (to give it one).
      messages: chunk.messages.map((message) =>
        message.waMessageId !== undefined
          ? (message as HistoryChunk['messages'][number])
          : { ...message, waMessageId: historyIdOf(message) },
      ),
    });
    return true;
  }

  activity(deviceId: string, activity: ChatActivity): boolean {
    const connection = this.network.connectionOf(deviceId);
    if (!connection?.online) return false;
    // Recorded through the device's spool, which retries until the store takes it.
    connection.activity(activity);
    return true;
  }

  /**
   * `viewer` views the device's status `waMessageId`: the device gets its read receipt, as WhatsApp sends one
   * per viewer. False when the device is not online.
   */
  statusView(deviceId: string, viewer: string, waMessageId: string): boolean {
    const connection = this.network.connectionOf(deviceId);
    if (!connection?.online) return false;
    connection.receipt({ waMessageId, status: 'read', recipient: viewer, timestamp: Math.floor(Date.now() / 1000) });
    return true;
  }

  /**
   * `from` reacts to a post of a channel (an empty emoji takes the reaction back): the channel's posts count it, and
   * the owner's and admins' online devices hear of it.
   * False when the device is not online; a post the channel does not have is passed over.
   */
  channelReaction(
    deviceId: string,
    reaction: { channelId: string; waMessageId: string; from: string; emoji: string },
  ): boolean {
    if (!this.network.connectionOf(deviceId)?.online) return false;
    const { channelId, waMessageId, from, emoji } = reaction;
    if (this.network.channels.react(channelId, waMessageId, from, emoji))
      this.network.tellChannel(
        reactionReport(channelId, waMessageId, emoji),
        this.network.channels.adminsOf(channelId),
      );
    return true;
  }

  /** A group of the simulated network (the groups API builds on it); its members receive its messages. */
  createGroup(subject: string, members: readonly string[]): { groupId: string } {
    return { groupId: this.network.groups.create(subject, members).groupId };
  }

  /** The device hears nothing and nothing it sends leaves (`on`), or works again; its connection stays up. */
  deafen(deviceId: string, on: boolean): void {
    this.network.setDeaf(deviceId, on);
  }

  /** The network drops the device's connection (the device reconnects). False when it is not online. */
  disconnect(deviceId: string): boolean {
    const connection = this.network.connectionOf(deviceId);
    if (!connection?.online) return false;
    connection.drop('transient', 'the connection dropped (sandbox)');
    return true;
  }

  /**
   * The phone unlinks the device. Online: it is told at once. Not connected: its credentials are marked
   * revoked and its next connection is told, as WhatsApp does.
   */
  async logout(deviceId: string): Promise<UnlinkOutcome> {
    const connection = this.network.connectionOf(deviceId);
    // Still starting with credentials read before this: it must not come online on them (see connect()).
    if (connection && !connection.online) this.unlinkedWhileStarting.add(connection);
    if (connection?.online) {
      await this.credentials.wipe(deviceId);
      connection.drop('logged_out', 'the phone unlinked this device');
      return 'unlinked';
    }
    const credentials = await this.credentials.load(deviceId);
    if (!credentials || credentials.revoked) return 'not_linked';
    await this.credentials.save(deviceId, { ...credentials, revoked: true });
    return 'unlinked';
  }
}

/** A history chunk as the phone sends it: a message may come without its id, which the network then gives it. */
export type SandboxHistoryChunk = Omit<HistoryChunk, 'messages'> & {
  messages: Array<Omit<HistoryChunk['messages'][number], 'waMessageId'> & { waMessageId?: string }>;
};
