/**
 * The engine port: what a device actor needs from a messaging network. Two engines implement it:
 * `sandbox` (a simulated network inside the gateway) and `baileys` (WhatsApp Web multi-device).
 * The actor owns the session state; an engine only reports what happened through EngineEvents and
 * never decides states itself (the reconnect policy is the actor's).
 */
import type { Readable } from 'node:stream';
import type { ContactCard, ReceivedMessage } from '../messages/message-events.js';
import type { ChatActivity, HistoryChunk } from '../inbox/inbox-events.js';

import type { GroupReport } from '../groups/group-events.js';
import type { GroupOperations } from '../groups/group-operations.js';
import type { AccountOperations } from '../account/account-operations.js';
import type { ChannelOperations } from '../channels/channel-operations.js';
import type { ChannelReport } from '../channels/channel-events.js';

export type { ContactCard, InboundMedia, PollSpec, QuotedMessage } from '../messages/message-events.js';
export type { ChatActivity, HistoryChunk } from '../inbox/inbox-events.js';
export type { GroupMetadata, GroupReport, GroupSettingsChange, ParticipantAction } from '../groups/group-events.js';
export type { CreatedGroup, GroupOperations, ParticipantResult } from '../groups/group-operations.js';
export type { AccountOperations, OwnProfile } from '../account/account-operations.js';
export type { ChannelMetadata, ChannelReport } from '../channels/channel-events.js';
export type { ChannelOperations, ChannelPage, ChannelPost } from '../channels/channel-operations.js';

export type EngineName = 'baileys' | 'sandbox';

export interface LinkedAccount {
  /** Digits only. */
  phone: string;
  jid: string;
  name?: string;
}

/** Why a connection ended, as the actor needs to decide the next state. */
export type DisconnectKind =
  | 'restart_required' // reconnect at once (Baileys 515)
  | 'logged_out' // the phone unlinked this device: wipe credentials (Baileys 401)
  | 'connection_replaced' // another session took over: give up (Baileys 440)
  | 'account_restricted' // WhatsApp refused the account itself (banned, locked): give up, redialling would not help (Baileys 402, 403, 406)
  | 'transient'; // anything else: reconnect with backoff

export interface InboundMessage extends ReceivedMessage {
  /**
   * Opens the media's bytes as a stream (downloaded from the network, decrypted). Not recorded: the
   * gateway streams them to disk when the message arrives, before it is recorded (src/media/inbound-media.ts).
   */
  downloadMedia?: () => Promise<Readable>;
}

export interface Receipt {
  waMessageId: string;
  /** `failed`: the network refused the message after accepting it for sending (an error acknowledgement). */
  status: 'delivered' | 'read' | 'played' | 'failed';
  recipient: string;
  /** Unix seconds. */
  timestamp: number;
  /** Why it failed (with `failed` only). */
  error?: { code: string; message: string };
}

export interface Contact {
  number: string;
  jid: string;
  name?: string;
  pushName?: string;
}

/** One person's two addresses, as WhatsApp paired them: a number and its LID (`<digits>@lid`). */
export interface IdentityPair {
  number: string;
  lid: string;
}

/** How a report of the network is to be recorded. */
export interface ReportOptions {
  /**
   * Default true: the network was told already that the device has it (WhatsApp acknowledges a message
   * before Baileys reports it), so the actor keeps it and retries until the store takes it. False: the
   * sender still waits for the answer (the sandbox's POST /inbound), so a failed write rejects, is answered
   * to that sender, and is not recorded later.
   */
  retry?: boolean;
}

/**
 * Callbacks from a running connection to its actor. The reports (inbound, receipt, contacts) resolve once
 * what they carry is durable in the store; they reject only when the actor is stopped before that (process
 * shutdown, device deleted) or, with `retry: false`, when the store refused it.
 */
export interface EngineEvents {
  qr(code: string, expiresAt: Date): void;
  /** A code to type on the phone (after requestPairingCode), issued or renewed. */
  pairingCode?(code: string, expiresAt: Date): void;
  online(account: LinkedAccount): void;
  disconnected(kind: DisconnectKind, detail: string): void;
  inbound(message: InboundMessage, options?: ReportOptions): Promise<void>;
  receipt(receipt: Receipt): Promise<void>;
  contacts(contacts: Contact[]): Promise<void>;
  /** LID ↔ number pairs the network made known (its LID mapping, a message's alternative address). Resolves when durable. */
  identities?(pairs: IdentityPair[]): Promise<void>;
  /** Edits, revokes, poll votes, presence and calls: facts about chats that are not messages. Resolves when durable. */
  activity?(activity: ChatActivity): Promise<void>;
  /** A chunk of the account's history (history sync), recorded without `message.received`. Resolves when durable. */
  history?(chunk: HistoryChunk, options?: ReportOptions): Promise<void>;
  /** Changes of groups made elsewhere (settings, participants, groups the account was added to). Resolves when durable. */
  groups?(report: GroupReport): Promise<void>;
  /** Changes of followed channels made elsewhere (name, description, the account's role). Resolves when durable. */
  channels?(report: ChannelReport): Promise<void>;
}

/** Media waiting in the outbox is a file on disk, never a buffer held in memory. */
export interface MediaFile {
  path: string;
  mimetype: string;
  size: number;
  filename?: string;
}

export type OutgoingContent =
  /** `backgroundColor` and `font`: a text status's look. */
  | { kind: 'text'; text: string; backgroundColor?: string; font?: number }
  | { kind: 'image' | 'video'; media: MediaFile; caption?: string }
  | { kind: 'audio'; media: MediaFile; ptt?: boolean }
  | { kind: 'file'; media: MediaFile; caption?: string }
  | { kind: 'location'; latitude: number; longitude: number; name?: string; address?: string }
  | { kind: 'link'; url: string; text: string; preview?: boolean }
  /**
   * `fromMe`: whether the target message was sent by this device (the outbox knows: it is one of its
   * waMessageIds). WhatsApp addresses a reaction by (chat, fromMe, id); when omitted, the Baileys engine
   * uses true for ids it sent on the current connection and false (a received message) otherwise.
   * `sender`: in a group, who wrote the target (a number or `@lid` id; absent for our own): WhatsApp shows
   * the reaction to that member only when the reaction's key names them.
   */
  | { kind: 'reaction'; messageId: string; emoji: string; fromMe?: boolean; sender?: string }
  /** WebP, static or animated. */
  | { kind: 'sticker'; media: MediaFile }
  | { kind: 'contact'; contacts: ContactCard[] }
  /** `secret`: 32 random bytes as base64, the poll's message secret, kept so its votes can be decrypted. */
  | { kind: 'poll'; question: string; options: string[]; multipleAnswers: boolean; secret: string }
  /** Another message's content, sent again marked as forwarded. */
  | { kind: 'forward'; content: ForwardableContent }
  /** Replaces the text (or caption) of a message this account sent. */
  | { kind: 'edit'; messageId: string; text: string };

export type ForwardableContent = Extract<
  OutgoingContent,
  { kind: 'text' | 'image' | 'video' | 'audio' | 'file' | 'sticker' | 'location' | 'link' | 'contact' }
>;

/** The message a send quotes (`replyTo`). */
export interface ReplyTarget {
  waMessageId: string;
  /** Whether this account sent it. */
  fromMe: boolean;
  /** Its sender: a number or `@lid` id; in a group, the participant. Empty for our own messages. */
  from: string;
  type: string;
  body: string;
}

export interface OutgoingMessage {
  /** Assigned when queued and reused on every retry: the engine sends with exactly this id. */
  waMessageId: string;
  /** A number, a group id (`…@g.us`), a `<digits>@lid` id, or a channel this account posts to (`…@newsletter`). */
  to: string;
  content: OutgoingContent;
  replyTo?: ReplyTarget;
  /** Numbers mentioned in the text or caption. */
  mentions?: string[];
  /** A status (`to` is `status@broadcast`): the numbers that see it (WhatsApp's statusJidList). */
  audience?: string[];
}

export type ChatPresence = 'typing' | 'recording' | 'paused';
export type OwnPresence = 'available' | 'unavailable';

/** A failure an engine reports; `permanent` ones are not retried. */
export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    /** `recipient_not_found`, `media_unavailable`, `not_connected`, `engine_error`, or an engine's own code. */
    readonly code: string,
    message: string,
    readonly permanent = false,
  ) {
    super(message);
  }
}

/** A message of a chat as WhatsApp addresses it in chat changes (its key, and its time). */
export interface ChatMessageRef {
  waMessageId: string;
  fromMe: boolean;
  /** In a group: who wrote it (a number or `@lid` id). */
  participant?: string;
  /** Unix seconds. */
  timestamp: number;
}

/** A change of a chat's settings for this account (one at a time, as WhatsApp's app state takes them). */
export type ChatChange =
  | { archived: boolean }
  | { pinned: boolean }
  /** Epoch ms, `Infinity` for ever, or null to unmute. */
  | { mutedUntilMs: number | null }
  | { unread: boolean }
  | { deleted: true }
  | { cleared: true };

/**
 * Chat management for this account (WhatsApp's app state: archive, pin, mute, read/unread, delete, clear; stars,
 * pins and deletions for me of messages). Each resolves once the network took it.
 */
export interface ChatOperations {
  /** `last`: the chat's latest message, which WhatsApp needs for archive, read/unread, delete and clear. */
  modify(chatId: string, change: ChatChange, last: ChatMessageRef | undefined): Promise<void>;
  star(chatId: string, message: ChatMessageRef, starred: boolean): Promise<void>;
  /** `seconds`: how long it stays pinned; 0 unpins. */
  pin(chatId: string, message: ChatMessageRef, seconds: number): Promise<void>;
  deleteForMe(chatId: string, message: ChatMessageRef): Promise<void>;
  /**
   * Asks the phone for up to `count` messages of the chat older than `oldest` (the oldest one the gateway holds).
   * Resolves once asked; the messages arrive later as a history chunk (EngineEvents.history), whatever the
   * device's `historySync` setting (this one was asked for). Absent: the engine cannot.
   */
  fetchHistory?(chatId: string, count: number, oldest: ChatMessageRef): Promise<void>;
}

/** A label as WhatsApp's app state carries it (the id is chosen by the client that makes it). */
export interface LabelEdit {
  labelId: string;
  name: string;
  /** 0..19. */
  color: number;
  deleted: boolean;
}

/**
 * Labels of a WhatsApp Business account (app state, like chat management). Each change resolves once the network
 * took it.
 */
export interface LabelOperations {
  /** Whether the linked account is a WhatsApp Business account: only those have labels. */
  isBusiness(): boolean;
  /** Makes, changes or deletes a label. */
  edit(label: LabelEdit): Promise<void>;
  /** Puts a label on a chat (`add`) or takes it off (`remove`). */
  labelChat(chatId: string, labelId: string, action: 'add' | 'remove'): Promise<void>;
}

/** One live connection of one device. */
export interface EngineConnection {
  send(message: OutgoingMessage): Promise<void>;
  /** Deletes a sent message for everyone. */
  revoke(waMessageId: string, to: string): Promise<void>;
  checkNumber(number: string): Promise<{ exists: boolean; jid?: string }>;
  avatarUrl(number: string): Promise<string | null>;
  /** Read receipts for received messages of a chat (`participant`: the sender, in groups). */
  markRead?(chatId: string, messages: Array<{ waMessageId: string; participant?: string }>): Promise<void>;
  /** Asks for a contact's presence changes (reported as `presence` activity, with `lastSeen` when known). */
  subscribePresence?(number: string): Promise<void>;
  /** Typing or recording in a chat (`chatId`), or the account's own availability (no chat). */
  sendPresence?(state: ChatPresence | OwnPresence, chatId?: string): Promise<void>;
  /**
   * Links the account `phone` by a code typed on the phone instead of a QR (only while codes are on show).
   * The code arrives through EngineEvents.pairingCode before this resolves, and is renewed like a QR.
   */
  requestPairingCode?(phone: string): Promise<void>;
  /** The account's profile, others' about texts, blocking (absent: the engine has none). */
  readonly profileOps?: AccountOperations;
  /** Groups: list, create, change, invite, join, leave (absent: the engine has none). */
  readonly groups?: GroupOperations;
  /** Chat management (absent: the engine has none). */
  readonly chats?: ChatOperations;
  /** Channels (newsletters): create, follow, change, read posts (absent: the engine has none). */
  readonly channels?: ChannelOperations;
  /** WhatsApp Business labels (absent: the engine has none). */
  readonly labels?: LabelOperations;
  /** Ends the connection and keeps the credentials: the next connect needs no QR. */
  close(): Promise<void>;
  /** Unlinks the device from the account and wipes the credentials. */
  logout(): Promise<void>;
}

export interface Engine {
  readonly name: EngineName;
  /**
   * Starts connecting with the device's stored credentials, or by issuing QR codes when it has none.
   * Progress arrives through `events`; the returned connection is usable once `online` was reported.
   */
  connect(deviceId: string, events: EngineEvents): Promise<EngineConnection>;
  /** Deletes whatever credentials the engine keeps for the device (device deleted or logged out). */
  forget(deviceId: string): Promise<void>;
  /** Gateway shutdown, after every connection was closed: stop whatever the engine still runs (timers, sockets). */
  close?(): Promise<void>;
}
