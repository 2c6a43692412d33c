/**
 * The sandbox phone's own history of a chat, which it sends when a device asks for older messages on demand
 * (POST /devices/:deviceId/chats/:chatId/history): one message a minute before the oldest one the device holds,
 * alternately from the other party and from the account, back to 2009 (nothing is older on WhatsApp). Made from the
 * request alone, so the same request gives the same messages with the same ids (recorded once).
 */
import { createHash } from 'node:crypto';
import type { ChatMessageRef, HistoryChunk } from '../engine.js';
import { isGroupId } from '../../messages/chat-id.js';

/** 2009-01-01: the phone has nothing older. */
const FIRST_MESSAGE_AT = 1_230_768_000;
const SPACING_S = 60;

/**
 * The id of a history message sent without one: from what the message is (chat, sender, time, text), never
 * from where it stands in a chunk, so the same message sent in two chunks is one message.
 */
export function historyIdOf(message: { chatId?: string; from: string; timestamp: number; body: string }): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([message.chatId ?? message.from, message.from, message.timestamp, message.body]))
    .digest('hex');
  return `H${digest.slice(0, 19).toUpperCase()}`;
}

/**
 * Up to `count` messages of the chat older than `oldest`, newest first as WhatsApp sends them; `me`: the account's
 * number, `members`: a group's members (their messages come from them in turn; none known: all from the account).
 */
export function olderHistory(
  chatId: string,
  count: number,
  oldest: ChatMessageRef,
  me: string,
  members: readonly string[] = [],
): HistoryChunk {
  const isGroup = isGroupId(chatId);
  // A group the network does not know (history only): its members are whoever wrote the oldest message.
  const known = members.length > 0 ? members : oldest.participant ? [oldest.participant] : [];
  const others = isGroup ? known.filter((member) => member !== me) : [chatId];
  const messages: HistoryChunk['messages'] = [];
  for (let i = 1; i <= count; i++) {
    const timestamp = oldest.timestamp - i * SPACING_S;
    if (timestamp < FIRST_MESSAGE_AT) break;
    const sender = i % 2 === 1 ? others[Math.floor(i / 2) % Math.max(1, others.length)] : undefined;
    const body = `Older message ${i} before ${oldest.waMessageId}`;
    const from = sender ?? me;
    messages.push({
      waMessageId: historyIdOf({ chatId, from, timestamp, body }),
      chatId,
      isGroup,
      from,
      ...(sender === undefined ? { fromMe: true } : {}),
      ...(isGroup && sender !== undefined ? { participant: sender } : {}),
      type: 'text',
      body,
      timestamp,
    });
  }
  const syncId = createHash('sha256')
    .update(JSON.stringify(['on-demand', chatId, oldest.waMessageId, count]))
    .digest('hex')
    .slice(0, 32);
  return { syncId, chats: [{ chatId }], messages, progress: 100, final: true };
}
