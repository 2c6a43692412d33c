/**
 * A WhatsApp message received by Baileys (`messages.upsert`), mapped to the gateway's InboundMessage:
 * the `message.received` shape of src/inbox/inbox-events.ts. Pure: the sender's phone digits are resolved by the caller
 * (a LID needs a lookup in the connection's LID mapping).
 */
import { type WAMessage, proto, getContentType, normalizeMessageContent, toNumber } from 'baileys';
import { contactCardOf } from '../../messages/vcard.js';
import type { ContactCard, InboundMessage, QuotedMessage } from '../engine.js';

/** What a message refers to by JID (quoted sender, mentions); the caller turns JIDs into chat ids. */
export interface InboundReferences {
  /** JID of the quoted message's sender, when it quotes one. */
  quotedSenderJid?: string;
  mentionedJids: string[];
}

/**
 * Content that is protocol traffic (edits, deletes, votes, pins), not a message a user wrote, and an
 * album's header (its photos and videos follow as messages of their own).
 */
const NOT_A_MESSAGE: ReadonlySet<string> = new Set([
  'protocolMessage',
  'pollUpdateMessage',
  'keepInChatMessage',
  'pinInChatMessage',
  'albumMessage',
]);

/** A URL as WhatsApp clients linkify it: with a scheme or starting with www. */
const URL_IN_TEXT = /(?:https?:\/\/|\bwww\.)[^\s<>"]+/i;

const DEFAULT_MIMETYPE = 'application/octet-stream';

/**
 * The received message as the gateway reports it, or undefined when it carries nothing to report
 * (a decryption placeholder without content, or protocol traffic). `nowSeconds` stands in for a
 * missing timestamp.
 */
export function inboundMessageOf(
  message: WAMessage,
  from: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): InboundMessage | undefined {
  const id = message.key.id;
  const content = normalizeMessageContent(message.message);
  if (!id || !content) return undefined;
  const contentType = getContentType(content);
  if (!contentType || NOT_A_MESSAGE.has(contentType)) return undefined;

  const timestamp = toNumber(message.messageTimestamp ?? 0) || nowSeconds;
  const base = {
    waMessageId: id,
    from,
    timestamp,
    ...(message.pushName ? { pushName: message.pushName } : {}),
  };
  const described = describeContent(content, contentType);
  const quoted = quotedOf(content, contentType);
  const secret = message.message?.messageContextInfo?.messageSecret ?? content.messageContextInfo?.messageSecret;
  return {
    ...base,
    ...described,
    ...(quoted ? { quoted } : {}),
    ...(described.poll && secret?.length ? { secret: Buffer.from(secret).toString('base64') } : {}),
  };
}

/** The JIDs a message refers to, for the caller to resolve (LIDs need a lookup). */
export function referencesOf(message: WAMessage): InboundReferences {
  const content = normalizeMessageContent(message.message);
  const contentType = content && getContentType(content);
  const context = contentType ? contextInfoOf(content, contentType) : undefined;
  return {
    ...(context?.stanzaId && context.participant ? { quotedSenderJid: context.participant } : {}),
    mentionedJids: (context?.mentionedJid ?? []).filter((jid): jid is string => !!jid),
  };
}

function contextInfoOf(content: proto.IMessage, contentType: keyof proto.IMessage): proto.IContextInfo | undefined {
  const inner = content[contentType] as { contextInfo?: proto.IContextInfo | null } | null | undefined;
  return (typeof inner === 'object' && inner?.contextInfo) || undefined;
}

/** The message a reply quotes, `from` left empty (the caller resolves the sender's JID). */
function quotedOf(content: proto.IMessage, contentType: keyof proto.IMessage): QuotedMessage | undefined {
  const context = contextInfoOf(content, contentType);
  if (!context?.stanzaId) return undefined;
  const quotedContent = normalizeMessageContent(context.quotedMessage);
  const quotedType = quotedContent && getContentType(quotedContent);
  const described =
    quotedContent && quotedType ? describeContent(quotedContent, quotedType) : { type: 'unknown' as const, body: '' };
  return { waMessageId: context.stanzaId, from: '', type: described.type, body: described.body };
}

/** An edit or a revoke (a protocol message), or undefined. `targetId` is the message it changes. */
export type ProtocolChange =
  | { kind: 'edited'; targetId: string; body: string; timestamp: number; id: string }
  | { kind: 'revoked'; targetId: string; timestamp: number; id: string };

export function protocolChangeOf(
  message: WAMessage,
  nowSeconds = Math.floor(Date.now() / 1000),
): ProtocolChange | undefined {
  const content = normalizeMessageContent(message.message);
  const protocol = content?.protocolMessage;
  const id = message.key.id;
  const targetId = protocol?.key?.id;
  if (!protocol || !id || !targetId) return undefined;
  const timestamp = toNumber(message.messageTimestamp ?? 0) || nowSeconds;
  if (protocol.type === proto.Message.ProtocolMessage.Type.REVOKE) return { kind: 'revoked', targetId, timestamp, id };
  if (protocol.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT && protocol.editedMessage) {
    const edited = normalizeMessageContent(protocol.editedMessage);
    const editedType = edited && getContentType(edited);
    const body = edited && editedType ? describeContent(edited, editedType).body : '';
    return { kind: 'edited', targetId, body, timestamp, id };
  }
  return undefined;
}

type ContentFields = Pick<InboundMessage, 'type' | 'body' | 'media' | 'location' | 'contacts' | 'poll' | 'reaction'>;

function describeContent(content: proto.IMessage, contentType: keyof proto.IMessage): ContentFields {
  switch (contentType) {
    case 'conversation':
      return textOrLink(content.conversation ?? '', false);
    case 'extendedTextMessage': {
      const ext = content.extendedTextMessage!;
      return textOrLink(ext.text ?? '', !!ext.matchedText);
    }
    case 'imageMessage': {
      const image = content.imageMessage!;
      return { type: 'image', body: image.caption ?? '', media: mediaOf(image) };
    }
    case 'videoMessage':
    case 'ptvMessage': {
      const video = (content.videoMessage ?? content.ptvMessage)!;
      return { type: 'video', body: video.caption ?? '', media: mediaOf(video) };
    }
    case 'audioMessage':
      return { type: 'audio', body: '', media: mediaOf(content.audioMessage!) };
    case 'documentMessage': {
      const document = content.documentMessage!;
      return { type: 'file', body: document.caption ?? '', media: mediaOf(document, document.fileName) };
    }
    case 'stickerMessage':
      return { type: 'sticker', body: '', media: mediaOf(content.stickerMessage!) };
    case 'locationMessage': {
      const l = content.locationMessage!;
      return locationOf(l.degreesLatitude, l.degreesLongitude, l.comment, l.name, l.address);
    }
    case 'liveLocationMessage': {
      const l = content.liveLocationMessage!;
      return locationOf(l.degreesLatitude, l.degreesLongitude, l.caption);
    }
    case 'reactionMessage': {
      // An empty text removes an earlier reaction; reported as such, with body "".
      const reaction = content.reactionMessage!;
      const emoji = reaction.text ?? '';
      return {
        type: 'reaction',
        body: emoji,
        ...(reaction.key?.id ? { reaction: { messageId: reaction.key.id, emoji } } : {}),
      };
    }
    case 'contactMessage': {
      const contact = content.contactMessage!;
      return { type: 'contact', body: contact.displayName ?? '', contacts: cardsOf([contact]) };
    }
    case 'contactsArrayMessage': {
      const array = content.contactsArrayMessage!;
      const names = (array.contacts ?? []).map((c) => c.displayName).filter((n): n is string => !!n);
      return { type: 'contact', body: array.displayName || names.join(', '), contacts: cardsOf(array.contacts ?? []) };
    }
    case 'pollCreationMessage':
    case 'pollCreationMessageV2':
    case 'pollCreationMessageV3':
    case 'pollCreationMessageV5': {
      const poll = content[contentType] as proto.Message.IPollCreationMessage;
      const options = (poll.options ?? []).map((o) => o.optionName ?? '');
      return {
        type: 'poll',
        body: poll.name ?? '',
        poll: { question: poll.name ?? '', options, multipleAnswers: (poll.selectableOptionsCount ?? 0) !== 1 },
      };
    }
    default:
      return { type: 'unknown', body: '' };
  }
}

function cardsOf(contacts: proto.Message.IContactMessage[]): ContactCard[] {
  return contacts.map((c) => contactCardOf(c.vcard, c.displayName ?? '') ?? { name: c.displayName ?? '', phone: '' });
}

function textOrLink(text: string, hasPreviewMatch: boolean): ContentFields {
  return { type: hasPreviewMatch || URL_IN_TEXT.test(text) ? 'link' : 'text', body: text };
}

interface MediaFields {
  mimetype?: string | null;
  fileLength?: number | Long | null;
}
type Long = Parameters<typeof toNumber>[0];

function mediaOf(media: MediaFields, filename?: string | null): NonNullable<InboundMessage['media']> {
  const size = media.fileLength === null || media.fileLength === undefined ? undefined : toNumber(media.fileLength);
  return {
    mimetype: media.mimetype || DEFAULT_MIMETYPE,
    ...(size === undefined ? {} : { size }),
    ...(filename ? { filename } : {}),
  };
}

function locationOf(
  latitude: number | null | undefined,
  longitude: number | null | undefined,
  caption?: string | null,
  name?: string | null,
  address?: string | null,
): ContentFields {
  return {
    type: 'location',
    body: caption || [name, address].filter((part): part is string => !!part).join(', '),
    location: {
      latitude: latitude ?? 0,
      longitude: longitude ?? 0,
      ...(name ? { name } : {}),
      ...(address ? { address } : {}),
    },
  };
}
