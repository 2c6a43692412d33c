/**
 * The simulated network shared by every sandbox device of the process: who is online under which number,
 * delivery from device to device, and the receipts a sender gets back.
 */
import { type FileHandle, open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { randomBytes16 } from '../../eventstore/event-id.js';
import { isGroupId } from '../../messages/chat-id.js';
import { waMessageIdOf } from '../../messages/message-id.js';
import type { ChatActivity, GroupReport, InboundMessage, OutgoingContent, OutgoingMessage } from '../engine.js';
import type { SandboxConnection } from './sandbox-connection.js';
import { SandboxGroups } from './sandbox-groups.js';
import { SandboxProfiles } from './sandbox-account-operations.js';
import { isStatusChat } from '../../status/status-chat.js';
import { isChannelId } from '../../channels/channel-id.js';
import { SandboxChannels } from './sandbox-channels.js';
import type { ChannelReport } from '../../channels/channel-events.js';

/** A sent message's media not fetched by its recipient within this long is let go. */
const UNCLAIMED_MEDIA_MS = 5 * 60_000;
/** Sent messages remembered for read receipts (who sent them, to whom). */
const SENT_MEMORY = 50_000;

export interface SandboxTiming {
  /** After a send, the `delivered` receipt comes this much later. */
  deliveredDelayMs: number;
  /** And `read` this much after `delivered`. */
  readDelayMs: number;
}

const unixNow = () => Math.floor(Date.now() / 1000);

/** A message id shaped like the ones WhatsApp Web clients make (random bytes from a pool: a system call each cost more than the rest of an injection's id work). */
export const newSandboxMessageId = (): string => waMessageIdOf(randomBytes16());

export class SandboxNetwork {
  /** Each device's newest connection. */
  private readonly latest = new Map<string, SandboxConnection>();
  private readonly onlineByPhone = new Map<string, Set<SandboxConnection>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  readonly groups = new SandboxGroups();
  readonly profiles = new SandboxProfiles();
  readonly channels = new SandboxChannels();
  /** number → the connections subscribed to its presence (POST /contacts/:number/presence). */
  private readonly presenceSubscribers = new Map<string, Set<SandboxConnection>>();
  /** number → when its last device went offline (unix ms). */
  private readonly lastSeen = new Map<string, number>();
  /** waMessageId → its sender's connection and number: read receipts go back to it. */
  private readonly sentBy = new Map<string, { connection: SandboxConnection; phone: string; to: string }>();

  constructor(private readonly timing: SandboxTiming) {}

  /** The online connections a message to `to` reaches: a number's devices, or every member's of a group (the sender's own left out). */
  recipientsOf(to: string, sender: SandboxConnection | undefined): SandboxConnection[] {
    const phones = isGroupId(to)
      ? [...(this.groups.get(to)?.members.keys() ?? [])]
      : isChannelId(to)
        ? this.channels.followersOf(to)
        : [to];
    const found: SandboxConnection[] = [];
    for (const phone of phones)
      for (const connection of this.onlineByPhone.get(phone) ?? []) if (connection !== sender) found.push(connection);
    return found;
  }

  /** A change of a channel reaches the online devices of `numbers` (`except` left out), as newsletter notifications do. */
  tellChannel(report: ChannelReport, numbers: readonly string[], except?: SandboxConnection): void {
    for (const number of numbers)
      for (const connection of this.recipientsOf(number, except)) connection.channelReport(report);
  }

  /**
   * Where a sent message goes: its recipients, and the sender's account's other linked devices, which get it
   * as sent by the account (`fromMe`), as WhatsApp's multi-device does (in a group they are members already).
   */
  audienceOf(to: string, sender: SandboxConnection, from: string, statusAudience?: string[]): SandboxConnection[] {
    // A status reaches the online devices of its audience only.
    if (isStatusChat(to)) {
      const reached: SandboxConnection[] = [];
      for (const phone of new Set(statusAudience ?? []))
        for (const connection of this.onlineByPhone.get(phone) ?? [])
          if (connection !== sender) reached.push(connection);
      return reached;
    }
    const found = this.recipientsOf(to, sender);
    // A channel's post reaches its followers only.
    if (isGroupId(to) || isChannelId(to) || to === from) return found;
    for (const connection of this.onlineByPhone.get(from) ?? []) if (connection !== sender) found.push(connection);
    return found;
  }

  /**
   * The recipients of a message with media get each their own open handle on its file, taken now: the
   * outbox removes the file once the message is sent, and an open file outlives its name.
   */
  async openMediaFor(path: string, count: number): Promise<Array<() => Promise<Readable>>> {
    const openers: Array<() => Promise<Readable>> = [];
    for (let i = 0; i < count; i++) {
      const handle: FileHandle = await open(path, 'r');
      let claimed = false;
      const timer = setTimeout(() => void (claimed || handle.close().catch(() => undefined)), UNCLAIMED_MEDIA_MS);
      timer.unref();
      openers.push(async () => {
        if (claimed) throw new Error('the media was already fetched');
        claimed = true;
        clearTimeout(timer);
        return handle.createReadStream({ autoClose: true });
      });
    }
    return openers;
  }

  /** A read receipt of `reader` for a message it received goes back to the message's sender. */
  markRead(reader: string, waMessageId: string): boolean {
    const sent = this.sentBy.get(waMessageId);
    if (!sent) return false;
    const timestamp = Math.floor(Date.now() / 1000);
    this.later(0, () =>
      sent.connection.receipt({
        waMessageId,
        status: 'read',
        recipient: isGroupId(sent.to) ? sent.to : reader,
        timestamp,
      }),
    );
    return true;
  }

  /** Typing and the like reach the chat's other party (or the group's members). */
  presence(
    sender: SandboxConnection,
    from: string,
    chatId: string,
    state: Extract<ChatActivity, { kind: 'presence' }>['state'],
  ): void {
    const shownAs = isGroupId(chatId) ? chatId : from;
    this.later(0, () => {
      for (const recipient of this.recipientsOf(chatId, sender))
        recipient.activity({ kind: 'presence', chatId: shownAs, from, state });
    });
  }

  /** A change of a group reaches the online devices of `numbers` (the sender's own connection left out). */
  groupReport(sender: SandboxConnection, numbers: Iterable<string>, report: GroupReport): void {
    const reached: SandboxConnection[] = [];
    for (const phone of numbers)
      for (const connection of this.onlineByPhone.get(phone) ?? []) if (connection !== sender) reached.push(connection);
    this.later(0, () => {
      for (const recipient of reached) recipient.groupReport(report);
    });
  }

  /**
   * Edits and revokes of a sent message reach its recipients, and the sender's account's other linked devices
   * as made by the account (`fromMe`, in the chat with the recipient), as its messages do (audienceOf).
   */
  relay(
    sender: SandboxConnection,
    to: string,
    from: string,
    activity: Extract<ChatActivity, { kind: 'edited' | 'revoked' }>,
  ): void {
    const reached = this.audienceOf(to, sender, from);
    this.later(0, () => {
      for (const recipient of reached)
        recipient.activity(recipient.account?.phone === from ? { ...activity, chatId: to, fromMe: true } : activity);
    });
  }

  /** Makes `connection` its device's current one; answers the one it replaces, if any. */
  track(connection: SandboxConnection): SandboxConnection | undefined {
    const previous = this.latest.get(connection.deviceId);
    this.latest.set(connection.deviceId, connection);
    return previous === connection ? undefined : previous;
  }

  /** Devices made deaf (POST /sandbox/devices/:deviceId/deafen): connected, and nothing reaches them or leaves them. */
  private readonly deaf = new Set<string>();

  setDeaf(deviceId: string, on: boolean): void {
    if (on) this.deaf.add(deviceId);
    else this.deaf.delete(deviceId);
  }

  isDeaf(deviceId: string): boolean {
    return this.deaf.has(deviceId);
  }

  connectionOf(deviceId: string): SandboxConnection | undefined {
    return this.latest.get(deviceId);
  }

  attach(connection: SandboxConnection, phone: string): void {
    let connections = this.onlineByPhone.get(phone);
    if (!connections) this.onlineByPhone.set(phone, (connections = new Set()));
    connections.add(connection);
    if (connections.size === 1) this.tellPresence(phone);
  }

  /**
   * `subscriber` wants `phone`'s presence: it hears the present one at once, then every change (a device of the
   * number coming online or going offline, or the account saying it is available or not).
   */
  subscribePresence(subscriber: SandboxConnection, phone: string): void {
    let subscribers = this.presenceSubscribers.get(phone);
    if (!subscribers) this.presenceSubscribers.set(phone, (subscribers = new Set()));
    subscribers.add(subscriber);
    this.tellPresence(phone, [subscriber]);
  }

  /** The account `phone` says it is available or not (POST /presence). */
  ownPresence(phone: string, state: 'available' | 'unavailable'): void {
    if (state === 'unavailable') this.lastSeen.set(phone, Date.now());
    this.tellPresence(phone, undefined, state);
  }

  private tellPresence(phone: string, to?: Iterable<SandboxConnection>, said?: 'available' | 'unavailable'): void {
    const subscribers = [...(to ?? this.presenceSubscribers.get(phone) ?? [])];
    if (subscribers.length === 0) return;
    const state = said ?? (this.onlineByPhone.has(phone) ? 'available' : 'unavailable');
    const seen = this.lastSeen.get(phone);
    this.later(0, () => {
      for (const subscriber of subscribers) {
        if (!subscriber.online) continue;
        subscriber.activity({
          kind: 'presence',
          chatId: phone,
          from: phone,
          state,
          ...(state === 'unavailable' && seen !== undefined ? { lastSeen: new Date(seen).toISOString() } : {}),
        });
      }
    });
  }

  detach(connection: SandboxConnection): void {
    const phone = connection.account?.phone;
    const connections = phone === undefined ? undefined : this.onlineByPhone.get(phone);
    const wasThere = connections?.delete(connection) === true;
    if (phone !== undefined && connections?.size === 0) {
      this.onlineByPhone.delete(phone);
      if (wasThere) {
        this.lastSeen.set(phone, Date.now());
        this.tellPresence(phone);
      }
    }
    for (const subscribers of this.presenceSubscribers.values()) subscribers.delete(connection);
    if (this.latest.get(connection.deviceId) === connection) this.latest.delete(connection.deviceId);
  }

  /** Hands the message to every other online device of the recipient, then receipts go back to the sender. */
  deliver(
    sender: SandboxConnection,
    from: string,
    message: OutgoingMessage,
    recipients?: SandboxConnection[],
    media?: Array<() => Promise<Readable>>,
  ): void {
    this.sentBy.set(message.waMessageId, { connection: sender, phone: from, to: message.to });
    if (isChannelId(message.to)) {
      const { type, body } = contentOf(message.content);
      this.channels.post(message.to, {
        waMessageId: message.waMessageId,
        type,
        ...(body ? { body } : {}),
        timestamp: unixNow(),
      });
    }
    if (this.sentBy.size > SENT_MEMORY) this.sentBy.delete(this.sentBy.keys().next().value!);
    const reached = recipients ?? this.recipientsOf(message.to, sender);
    this.later(0, () => {
      const pushName = this.profiles.nameOf(from);
      reached.forEach((recipient, i) => {
        const own = recipient.account?.phone === from;
        const inbound = toInbound(from, message, unixNow(), own ? { fromMe: true } : { pushName });
        const opener = media?.[i];
        // Rejected only when the recipient's actor stops first (it logs what it loses).
        recipient.receive(opener ? { ...inbound, downloadMedia: opener } : inbound).catch(() => undefined);
      });
    });
    this.receiptsAfter(sender, message, 'sent');
  }

  /**
   * The receipts a message that got as far as `reached` still has to come, counted from now: what the
   * network does for a message it holds when the device comes back (the sandbox's timers do not survive a
   * restart, the messages' statuses do).
   */
  receiptsAfter(
    sender: SandboxConnection,
    message: { waMessageId: string; to: string },
    reached: 'sent' | 'delivered',
  ): void {
    const receipt = (status: 'delivered' | 'read') => () =>
      sender.receipt({ waMessageId: message.waMessageId, status, recipient: message.to, timestamp: unixNow() });
    const { deliveredDelayMs, readDelayMs } = this.timing;
    if (reached === 'sent') {
      this.later(deliveredDelayMs, receipt('delivered'));
      this.later(deliveredDelayMs + readDelayMs, receipt('read'));
    } else this.later(readDelayMs, receipt('read'));
  }

  /** Runs `task` after `ms` unless the network is closed first. */
  later(ms: number, task: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      task();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  /** Gateway shutdown: nothing fires any more, every connection ends. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.latest.values()].map((connection) => connection.close()));
  }
}

/**
 * What a device sees of a sent message: a recipient's, from `from` (with the sender's profile name as `pushName`);
 * one of the sender's own other devices (`fromMe`), in its chat with the recipient.
 */
export function toInbound(
  from: string,
  message: OutgoingMessage,
  timestamp: number,
  seenBy: { fromMe?: boolean; pushName?: string } = {},
): InboundMessage {
  const group = isGroupId(message.to);
  const status = isStatusChat(message.to);
  // A channel's post is the channel's: its followers never see which admin wrote it.
  const channel = isChannelId(message.to);
  const fromMe = seenBy.fromMe === true;
  const base: Omit<InboundMessage, 'type' | 'body'> = {
    waMessageId: message.waMessageId,
    from: channel ? message.to : from,
    timestamp,
    chatId: group || fromMe || status || channel ? message.to : from,
    isGroup: group,
    fromMe,
    ...(group && !fromMe ? { participant: from } : {}),
    ...(seenBy.pushName && !fromMe && !channel ? { pushName: seenBy.pushName } : {}),
    ...(message.replyTo
      ? {
          quoted: {
            waMessageId: message.replyTo.waMessageId,
            from: message.replyTo.fromMe ? from : message.replyTo.from,
            type: message.replyTo.type as NonNullable<InboundMessage['quoted']>['type'],
            body: message.replyTo.body,
          },
        }
      : {}),
    ...(message.mentions?.length ? { mentions: message.mentions } : {}),
  };
  return { ...base, ...contentOf(message.content) };
}

function contentOf(content: OutgoingContent): Omit<InboundMessage, 'waMessageId' | 'from' | 'timestamp'> {
  const base = {};
  switch (content.kind) {
    case 'text':
      return { ...base, type: 'text', body: content.text };
    case 'image':
    case 'video':
    case 'file':
      return { ...base, type: content.kind, body: content.caption ?? '', media: mediaOf(content.media) };
    case 'audio':
      return { ...base, type: 'audio', body: '', media: mediaOf(content.media) };
    case 'location': {
      const { latitude, longitude, name, address } = content;
      return {
        ...base,
        type: 'location',
        body: name ?? address ?? '',
        location: {
          latitude,
          longitude,
          ...(name === undefined ? {} : { name }),
          ...(address === undefined ? {} : { address }),
        },
      };
    }
    case 'link':
      return { ...base, type: 'link', body: content.text };
    case 'reaction':
      return {
        ...base,
        type: 'reaction',
        body: content.emoji,
        reaction: { messageId: content.messageId, emoji: content.emoji },
      };
    case 'sticker':
      return { type: 'sticker', body: '', media: mediaOf(content.media) };
    case 'contact':
      return { type: 'contact', body: content.contacts.map((c) => c.name).join(', '), contacts: content.contacts };
    case 'poll': {
      const { question, options, multipleAnswers, secret } = content;
      return { type: 'poll', body: question, poll: { question, options, multipleAnswers }, secret };
    }
    case 'forward':
      return contentOf(content.content);
    case 'edit':
      // Delivered as an activity (SandboxConnection.send), never as a message.
      return { type: 'unknown', body: content.text };
  }
}

function mediaOf(media: { mimetype: string; size: number; filename?: string }): NonNullable<InboundMessage['media']> {
  return {
    mimetype: media.mimetype,
    size: media.size,
    ...(media.filename === undefined ? {} : { filename: media.filename }),
  };
}
