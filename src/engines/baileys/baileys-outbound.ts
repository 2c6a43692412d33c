/**
 * The outbound side of a Baileys connection: what the actor asks of the socket (sends, revokes, read receipts,
 * presence, number lookups, avatars), each refused unless the connection is online and each socket error turned
 * into an EngineError; and the rejection of a call the inbound side reports.
 */
import { isStatusChat } from '../../status/status-chat.js';
import { access, constants } from 'node:fs/promises';
import { type WAPresence, generateMessageIDV2, jidNormalizedUser } from 'baileys';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import {
  type ChatPresence,
  EngineError,
  type LinkedAccount,
  type OutgoingMessage,
  type OwnPresence,
} from '../engine.js';
import type { StoreAuthState } from './auth/store-auth-state.js';
import type { BaileysSocket } from './baileys-socket.js';
import { statusCodeOf } from './disconnect-kind.js';
import { jidOfChat, jidOfPhone, normalizedPhoneJid, phoneOfJid } from './jid.js';
import { type LinkPreviewProvider, outgoingMessageOf } from './outgoing-content.js';

const WA_PRESENCE_OF: Readonly<Record<ChatPresence | OwnPresence, WAPresence>> = {
  typing: 'composing',
  recording: 'recording',
  paused: 'paused',
  available: 'available',
  unavailable: 'unavailable',
};

/** Numbers confirmed to exist and the JID WhatsApp answered for each, so only the first send to a number costs a lookup. */
const KNOWN_RECIPIENTS_MEMORY = 10_000;
/** WhatsApp answers "no picture" as item-not-found and "hidden by privacy settings" as not-authorized. */
const NO_AVATAR_CODES = new Set([401, 404]);

/** What the outbound side needs of its connection. */
export interface OutboundDependencies {
  socket: BaileysSocket;
  auth: StoreAuthState;
  settings: { verifyRecipients: boolean; linkPreview?: LinkPreviewProvider };
  logger: Logger;
  /** The ids the connection sent and their recipients: filled here, read by the inbound side too. */
  sent: LRUCache<string, string>;
  linkedAccount(): LinkedAccount | undefined;
  /** Throws not_connected unless the connection is online. */
  requireOnline(): void;
  /** A message went out: the server should acknowledge it (the connection watches for that). */
  awaitAck(waMessageId: string): void;
}

export class BaileysOutbound {
  /** Number → the JID WhatsApp resolved it to, which may differ from the number as typed (Brazil's ninth digit). */
  private readonly knownRecipients = new LRUCache<string, string>({ max: KNOWN_RECIPIENTS_MEMORY });

  constructor(private readonly deps: OutboundDependencies) {}

  async send(message: OutgoingMessage): Promise<void> {
    this.deps.requireOnline();
    const jid = await this.recipientJidOf(message.to);
    const { content } = message;
    const inner = content.kind === 'forward' ? content.content : content;
    if ('media' in inner) await assertReadable(inner.media.path);
    const linkPreview = inner.kind === 'link' && inner.preview !== false ? await this.fetchPreview(inner.url) : null;
    const accountJid = this.deps.linkedAccount()?.jid;
    const payload = outgoingMessageOf(message, {
      chatJid: jid,
      targetSentByUs: (id) => this.deps.sent.has(id),
      linkPreview,
      ...(accountJid ? { accountJid } : {}),
    });
    // Known before Baileys echoes it; kept if the send fails, since the id stays ours (a retry reuses it).
    this.deps.sent.set(message.waMessageId, message.to);
    // A status goes to status@broadcast with the JIDs that see it (and a text status's look).
    if (isStatusChat(message.to)) {
      payload.options.statusJidList = (message.audience ?? []).map(jidOfPhone);
      payload.options.broadcast = true;
      if (inner.kind === 'text') {
        if (inner.backgroundColor !== undefined) payload.options.backgroundColor = inner.backgroundColor;
        if (inner.font !== undefined) payload.options.font = inner.font;
      }
    }
    try {
      await this.deps.socket.sendMessage(jid, payload.content, payload.options);
    } catch (error) {
      throw engineErrorOf(error, `sending ${message.waMessageId}`);
    }
    this.deps.awaitAck(message.waMessageId);
  }

  async markRead(chatId: string, messages: Array<{ waMessageId: string; participant?: string }>): Promise<void> {
    this.deps.requireOnline();
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
    this.deps.requireOnline();
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
    this.deps.requireOnline();
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
    this.deps.requireOnline();
    const found = await this.lookUp(number);
    if (!found?.exists) return { exists: false };
    const jid = normalizedPhoneJid(found.jid) ?? jidOfPhone(number);
    this.knownRecipients.set(number, jid);
    return { exists: true, jid };
  }

  async avatarUrl(number: string): Promise<string | null> {
    this.deps.requireOnline();
    try {
      return (await this.deps.socket.profilePictureUrl(jidOfPhone(number), 'image')) ?? null;
    } catch (error) {
      if (NO_AVATAR_CODES.has(errorCodeOf(error) ?? 0)) return null;
      throw engineErrorOf(error, `fetching the avatar of ${number}`);
    }
  }

  /** Rejects the call (never throws: answers whether it worked), then tells the caller the configured message. */
  async rejectCall(callId: string, callerJid: string, message: string | null | undefined): Promise<boolean> {
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
    this.deps.sent.set(id, recipient);
    return id;
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
}

/** WhatsApp's error code of a failed query (Boom `data`), or the Boom status code. */
function errorCodeOf(error: unknown): number | undefined {
  const data = (error as { data?: unknown } | null)?.data;
  return typeof data === 'number' ? data : statusCodeOf(error);
}

export function engineErrorOf(error: unknown, doing: string): EngineError {
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
